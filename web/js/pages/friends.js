// Friends (/#/friends): challenges to me (accept, decline), add a friend by name, friend requests
// (accept, decline), my friends with who is online and at which table (a private table's link only
// for those who may see it), challenge a friend with my rules, remove or block; the blocked; and
// notices on this device (Web Push), asked for only when the player chooses it.
import { api, errorText, get, post } from '../api.js';
import { h } from '../dom.js';
import { formatNumber, t } from '../i18n.js';
import { acceptChallenge, challengeText, declineChallenge, disablePush, enablePush, onNotices, openChallenges, pushState, renderBox } from '../notices.js';
import { rulesChips } from '../rules.js';
import { currentUser } from '../session.js';
import { toast } from '../toast.js';

const REFRESH_MS = 20000;

export function mount(root) {
  let data = null;
  let error = '';
  let challenging = null; // the friend whose challenge form is open
  let push = 'off';
  let outgoing = [];
  let timer = null;
  let gone = false; // another page took the screen: a late answer draws nothing
  const stopNotices = onNotices(() => render());

  async function load() {
    try {
      const [friends, mine] = await Promise.all([get('/api/friends'), get('/api/challenges')]);
      data = friends;
      outgoing = mine.outgoing;
      error = '';
    } catch (failure) {
      error = errorText(failure);
    }
    render();
  }

  async function act(work, done) {
    try {
      const result = await work();
      if (done) toast(done, 'info');
      await load();
      return result;
    } catch (failure) {
      toast(errorText(failure), 'error');
      return null;
    }
  }

  let addFormEl = null;

  function addForm() {
    const input = h('input', { name: 'friend', id: 'friend-name', autocomplete: 'off', required: true, minlength: 2, maxlength: 24, pattern: '[A-Za-z0-9_\\-]+', placeholder: t('friends.name_placeholder'), 'aria-label': t('friends.add_label') });
    return h(
      'form',
      {
        class: 'friend-add',
        id: 'friend-add',
        onsubmit: (event) => {
          event.preventDefault();
          const name = input.value.trim();
          if (!name) return;
          act(() => post(`/api/friends/${encodeURIComponent(name)}`), null).then((answer) => {
            if (answer) toast(answer.status === 'friends' ? t('friends.now_friends', { name: answer.name }) : t('friends.requested', { name: answer.name }), 'info');
          });
          input.value = '';
        },
      },
      input,
      h('button', { type: 'submit', class: 'btn primary', text: t('friends.add') }),
    );
  }

  let challengeEl = null; // {name, form}: the open challenge form, kept across redraws (its choices stay)

  function challengeForm(friend) {
    if (challengeEl && challengeEl.name === friend.name) return challengeEl.form;
    challengeEl = { name: friend.name, form: newChallengeForm(friend) };
    return challengeEl.form;
  }

  function newChallengeForm(friend) {
    const field = (label, control) => h('label', { class: 'field' }, h('span', { text: label }), control);
    const select = (name, options, value) => h('select', { name }, options.map(([v, text]) => h('option', { value: String(v), selected: String(v) === String(value), text })));
    const me = currentUser();
    const form = h(
      'form',
      {
        class: 'challenge-form',
        id: 'challenge-form',
        onsubmit: (event) => {
          event.preventDefault();
          const values = new FormData(form);
          const body = { deck: Number(values.get('deck')), seats: 2, timer: Number(values.get('timer')), stake: Number(values.get('stake') || 0), transfer: values.get('transfer') === 'on' };
          act(() => post(`/api/friends/${encodeURIComponent(friend.name)}/challenge`, body), t('friends.challenge_sent', { name: friend.name })).then((sent) => {
            if (sent) {
              challenging = null;
              location.assign(`/t/${sent.code}`);
            }
          });
        },
      },
      field(t('field.deck'), select('deck', [[36, '36'], [24, '24'], [52, '52']], 36)),
      field(t('field.timer'), select('timer', [[30, '30 s'], [60, '60 s'], [0, t('friends.no_timer')]], 30)),
      field(t('field.stake'), h('input', { name: 'stake', type: 'number', min: 0, max: me && me.balance !== null ? me.balance : 0, step: 1, value: '0', inputmode: 'numeric' })),
      h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'transfer' }), h('span', { text: t('friends.transfer') })),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'btn primary', id: 'challenge-send', text: t('friends.challenge_send') }),
        h('button', { type: 'button', class: 'btn ghost', onclick: () => { challenging = null; render(); }, text: t('common.cancel') }),
      ),
    );
    return form;
  }

  function where(friend) {
    if (!friend.online) return h('span', { class: 'presence off', text: t('friends.offline') });
    if (!friend.table) return h('span', { class: 'presence on', text: t('friends.online') });
    const status = friend.table.status === 'playing' ? t('friends.playing') : t('friends.at_table');
    if (!friend.table.code) return h('span', { class: 'presence on', text: `${status}: ${t('friends.private_table')}` });
    return h('span', { class: 'presence on' }, `${status}: `, h('a', { href: `/t/${encodeURIComponent(friend.table.code)}`, class: 'friend-table', text: friend.table.name }));
  }

  function friendRow(friend) {
    const open = challenging === friend.name;
    const pending = outgoing.find((item) => item.to === friend.name);
    return h(
      'li',
      { class: ['friend-row', friend.online && 'online'], dataset: { name: friend.name } },
      h(
        'div',
        { class: 'friend-main' },
        h('span', { class: ['dot', friend.online ? 'on' : 'off'], 'aria-hidden': 'true' }),
        h('a', { class: 'friend-name', href: `/#/u/${encodeURIComponent(friend.name)}`, text: friend.name }),
        where(friend),
      ),
      h(
        'div',
        { class: 'friend-actions' },
        pending
          ? h('a', { class: 'btn small', href: `/t/${encodeURIComponent(pending.code)}`, text: t('friends.challenge_waiting') })
          : h('button', { type: 'button', class: 'btn small primary', dataset: { act: 'challenge' }, onclick: () => { challenging = open ? null : friend.name; render(); }, text: t('friends.challenge') }),
        h('button', { type: 'button', class: 'btn small ghost', dataset: { act: 'remove' }, onclick: () => act(() => api('DELETE', `/api/friends/${encodeURIComponent(friend.name)}`), t('friends.removed', { name: friend.name })), text: t('friends.remove') }),
        h('button', { type: 'button', class: 'btn small ghost', dataset: { act: 'block' }, onclick: () => act(() => post(`/api/blocks/${encodeURIComponent(friend.name)}`), t('friends.blocked_done', { name: friend.name })), text: t('friends.block') }),
      ),
      open ? challengeForm(friend) : null,
    );
  }

  function requestRow(person) {
    return h(
      'li',
      { class: 'friend-row', dataset: { name: person.name } },
      h('div', { class: 'friend-main' }, h('a', { class: 'friend-name', href: `/#/u/${encodeURIComponent(person.name)}`, text: person.name })),
      h(
        'div',
        { class: 'friend-actions' },
        h('button', { type: 'button', class: 'btn small primary', dataset: { act: 'accept' }, onclick: () => act(() => post(`/api/friends/${encodeURIComponent(person.name)}`), t('friends.now_friends', { name: person.name })), text: t('friends.accept') }),
        h('button', { type: 'button', class: 'btn small ghost', dataset: { act: 'decline' }, onclick: () => act(() => api('DELETE', `/api/friends/${encodeURIComponent(person.name)}`), null), text: t('friends.decline') }),
        h('button', { type: 'button', class: 'btn small ghost', dataset: { act: 'block' }, onclick: () => act(() => post(`/api/blocks/${encodeURIComponent(person.name)}`), t('friends.blocked_done', { name: person.name })), text: t('friends.block') }),
      ),
    );
  }

  function simpleRow(person, button) {
    return h('li', { class: 'friend-row', dataset: { name: person.name } }, h('div', { class: 'friend-main' }, h('span', { class: 'friend-name', text: person.name })), h('div', { class: 'friend-actions' }, button));
  }

  function pushPanel() {
    const text = { on: t('push.on'), off: t('push.off'), denied: t('push.denied'), unsupported: t('push.unsupported') }[push];
    const button =
      push === 'off'
        ? h('button', { type: 'button', class: 'btn small', id: 'push-enable', onclick: () => enablePush().then((state) => { push = state; render(); }).catch((failure) => toast(failure instanceof Error && !failure.status ? failure.message : errorText(failure), 'error')), text: t('push.enable') })
        : push === 'on'
          ? h('button', { type: 'button', class: 'btn small ghost', id: 'push-disable', onclick: () => disablePush().then((state) => { push = state; render(); }), text: t('push.disable') })
          : null;
    return h('section', { class: 'panel push-panel', id: 'push-panel', dataset: { state: push } }, h('h2', { text: t('push.title') }), h('p', { class: 'muted', text }), button);
  }

  function section(title, id, items, empty) {
    return h('section', { class: 'panel' }, h('h2', { text: title }), items.length ? h('ul', { class: 'friend-list', id }, items) : h('p', { class: 'muted', text: empty }));
  }

  let drawnKey = null; // what the page shows: the same again draws nothing (a tap is never lost to a rebuilt row)

  function render() {
    if (gone) return; // another page took the screen: a late answer draws nothing
    const me = currentUser();
    const key = JSON.stringify([openChallenges(), error, data, push, challenging, me && me.balance]);
    if (key === drawnKey && root.querySelector('.friends-page')) return;
    drawnKey = key;
    const body = [];
    const incoming = openChallenges();
    if (incoming.length) {
      body.push(
        h(
          'section',
          { class: 'panel challenges-panel' },
          h('h2', { text: t('friends.challenges') }),
          h(
            'ul',
            { class: 'friend-list', id: 'incoming-challenges' },
            incoming.map((item) =>
              h(
                'li',
                { class: 'friend-row', dataset: { challenge: String(item.id) } },
                h('div', { class: 'friend-main' }, h('span', { text: challengeText(item) }), rulesChips(item.rules, { compact: true })),
                h(
                  'div',
                  { class: 'friend-actions' },
                  h('button', { type: 'button', class: 'btn small primary', dataset: { act: 'accept' }, onclick: () => acceptChallenge(item), text: t('notices.accept') }),
                  h('button', { type: 'button', class: 'btn small ghost', dataset: { act: 'decline' }, onclick: () => declineChallenge(item), text: t('notices.decline') }),
                ),
              ),
            ),
          ),
        ),
      );
    }
    if (error) body.push(h('p', { class: 'form-error', role: 'alert', text: error }));
    else if (!data) body.push(h('p', { class: 'muted', text: t('common.loading') }));
    else {
      addFormEl = addFormEl || addForm(); // kept across redraws: a refresh never wipes a name being typed
      body.push(h('section', { class: 'panel' }, h('h2', { text: t('friends.add_title') }), addFormEl, h('p', { class: 'muted small', text: t('friends.explain') })));
      if (data.incoming.length) body.push(section(t('friends.requests'), 'friend-requests', data.incoming.map(requestRow), ''));
      const online = data.friends.filter((friend) => friend.online).length;
      body.push(section(`${t('friends.title')} · ${t('friends.online_count', { count: online, total: formatNumber(data.friends.length) })}`, 'friend-list', data.friends.map(friendRow), t('friends.none')));
      if (data.outgoing.length) body.push(section(t('friends.sent'), 'friend-sent', data.outgoing.map((person) => simpleRow(person, h('button', { type: 'button', class: 'btn small ghost', onclick: () => act(() => api('DELETE', `/api/friends/${encodeURIComponent(person.name)}`), null), text: t('friends.withdraw') }))), ''));
      body.push(pushPanel());
      if (data.blocked.length) body.push(section(t('friends.blocked'), 'blocked-list', data.blocked.map((person) => simpleRow(person, h('button', { type: 'button', class: 'btn small ghost', dataset: { act: 'unblock' }, onclick: () => act(() => api('DELETE', `/api/blocks/${encodeURIComponent(person.name)}`), null), text: t('friends.unblock') }))), ''));
    }
    root.replaceChildren(h('div', { class: 'page friends-page' }, h('h1', { text: t('friends.title') }), body));
  }

  const me = currentUser();
  if (!me || me.kind !== 'account') {
    root.replaceChildren(h('div', { class: 'page friends-page' }, h('h1', { text: t('friends.title') }), h('p', { class: 'panel muted', text: t('friends.accounts_only') }), h('a', { class: 'btn primary', href: '/#/login', text: t('header.login') })));
    return {
      unmount: () => {
        gone = true;
        stopNotices();
      },
    };
  }
  render();
  load();
  setTimeout(renderBox, 0); // this page lists the challenges: no corner box here
  pushState().then((state) => { push = state; render(); }).catch(() => {});
  timer = setInterval(() => { if (document.visibilityState === 'visible') load(); }, REFRESH_MS);
  return {
    relabel: () => {
      addFormEl = null; // new words: built again (a name being typed is carried over)
      const typed = root.querySelector('#friend-name');
      const value = typed ? typed.value : '';
      challengeEl = null;
      drawnKey = null;
      render();
      const again = root.querySelector('#friend-name');
      if (again) again.value = value;
    },
    unmount: () => {
      gone = true;
      clearInterval(timer);
      stopNotices();
      setTimeout(renderBox, 0); // the corner box again on the other pages
    },
  };
}
