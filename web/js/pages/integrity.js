// Admin: the fair-play flags (/#/admin/integrity, one flag at /#/admin/integrity/<id>), issue 20 and
// docs/integrity.md. Each flag shows its kind, summary and accounts (frozen or not), the matches
// behind it (links to their replays) and the pair's coins per day; the admin dismisses or warns
// (with a note), freezes or unfreezes an account's staked play (with a reason) and reverses a
// chosen match's coin movements (after a confirmation; the ledger answers with the transfers it
// made). A flag redraws alone when it changes, so what is typed in another one stays; a failed
// request says why in a toast and keeps what was typed.
import { adminTabs } from '../admintabs.js';
import { ApiError, errorText, get, post } from '../api.js';
import { h } from '../dom.js';
import { formatDate, formatNumber, formatSigned, t } from '../i18n.js';
import { pager } from '../pager.js';
import { currentUser, onSignInChange, refreshMe } from '../session.js';
import { toast } from '../toast.js';

const PAGE_SIZE = 10;
const STATUSES = ['open', 'warned', 'dismissed', 'all'];
const STATUS_KEY = 'durak.admin.integrity.status';

function kindText(kind) {
  switch (kind) {
    case 'quick_wins':
      return t('integrity.kind_quick_wins');
    case 'soft_play':
      return t('integrity.kind_soft_play');
    case 'private_staked':
      return t('integrity.kind_private_staked');
    case 'pair_cap':
      return t('integrity.kind_pair_cap');
    case 'new_inflow':
      return t('integrity.kind_new_inflow');
    default:
      return kind;
  }
}

function statusText(status) {
  switch (status) {
    case 'open':
      return t('integrity.status_open');
    case 'warned':
      return t('integrity.status_warned');
    case 'dismissed':
      return t('integrity.status_dismissed');
    default:
      return t('integrity.status_all');
  }
}

function savedStatus() {
  try {
    const saved = sessionStorage.getItem(STATUS_KEY);
    return STATUSES.includes(saved) ? saved : 'open';
  } catch {
    return 'open';
  }
}

/** A match's replay: the server's address when it is one of ours, else the replay route. */
function replayHref(match) {
  return typeof match.url === 'string' && match.url.startsWith('/') && !match.url.startsWith('//') ? match.url : `/#/replay/${encodeURIComponent(match.id)}`;
}

/** "alice −100 · bob +100": the ledger transfers of a reversal. */
function transfersLine(transfers) {
  return transfers.map((transfer, i) => [
    i ? ' · ' : null,
    h('span', { class: 'transfer', dataset: { account: transfer.account, amount: String(transfer.amount) } }, `${transfer.account} `, h('span', { class: ['coins', transfer.amount > 0 ? 'up' : transfer.amount < 0 ? 'down' : 'even'], text: formatSigned(transfer.amount) })),
  ]);
}

export function mount(root, params = {}) {
  const single = params.flag || '';
  let status = savedStatus();
  let page = 1;
  let flags = null; // the flags shown, in order
  let total = 0;
  let error = '';
  let token = 0;
  const notes = new Map(); // flag id -> the note being typed
  const noteErrors = new Map(); // flag id -> why the note was not sent
  const reasons = new Map(); // account id -> the freeze reason being typed (while its form is open)
  const reasonErrors = new Map();
  const transfers = new Map(); // match id -> {transfers, shortfall} of its reversal (this visit)
  const busy = new Set(); // actions on their way: "<flag>:dismiss", "account:<id>", "match:<id>"

  async function load() {
    const ticket = ++token;
    const me = currentUser();
    if (!me || !me.is_admin) {
      render();
      return;
    }
    try {
      if (single) {
        const flag = await get(`/api/admin/integrity/flags/${encodeURIComponent(single)}`);
        if (ticket !== token) return;
        flags = [flag];
        total = 1;
      } else {
        const offset = (page - 1) * PAGE_SIZE;
        const answer = await get(`/api/admin/integrity/flags?status=${status}&offset=${offset}&limit=${PAGE_SIZE}`);
        if (ticket !== token) return;
        flags = answer.flags;
        total = answer.total;
      }
      error = '';
    } catch (failure) {
      if (ticket !== token) return;
      error = failure instanceof ApiError && failure.status === 404 && single ? t('integrity.no_flag') : errorText(failure);
    }
    render();
  }

  // ------------------------------------------------------------------ actions

  /** Put a changed flag in place and redraw its card only. */
  function replaceFlag(flag) {
    if (!flags) return;
    flags = flags.map((old) => (old.id === flag.id ? flag : old));
    redraw(flag.id);
  }

  /** Redraw one card, keeping keyboard focus on the control with the same data-key. */
  function redraw(id) {
    const old = root.querySelector(`article.flag[data-flag="${id}"]`);
    const flag = flags && flags.find((item) => item.id === id);
    if (!old || !flag) return;
    const active = document.activeElement;
    const key = active && old.contains(active) ? active.dataset.key : null;
    const card = flagCard(flag);
    old.replaceWith(card);
    if (key) {
      const again = card.querySelector(`[data-key="${CSS.escape(key)}"]`);
      if (again) again.focus({ preventScroll: true });
    }
  }

  function flagsWithAccount(accountId) {
    return (flags || []).filter((flag) => flag.accounts.some((account) => account.id === accountId));
  }

  function flagsWithMatch(matchId) {
    return (flags || []).filter((flag) => flag.matches.some((match) => match.id === matchId));
  }

  async function decide(flag, verdict) {
    const note = (notes.get(flag.id) || '').trim();
    if (!note) {
      noteErrors.set(flag.id, t('integrity.note_required'));
      redraw(flag.id);
      return;
    }
    const key = `${flag.id}:${verdict}`;
    if (busy.has(key)) return;
    busy.add(key);
    noteErrors.delete(flag.id);
    redraw(flag.id);
    try {
      const updated = await post(`/api/admin/integrity/flags/${flag.id}/${verdict}`, { note });
      notes.delete(flag.id);
      busy.delete(key);
      replaceFlag(updated);
      toast(verdict === 'warn' ? t('integrity.warned', { id: flag.id }) : t('integrity.dismissed', { id: flag.id }));
    } catch (failure) {
      busy.delete(key);
      redraw(flag.id);
      toast(errorText(failure), 'error');
    }
  }

  async function freeze(flag, account) {
    const reason = (reasons.get(account.id) || '').trim();
    if (!reason) {
      reasonErrors.set(account.id, t('integrity.reason_required'));
      redraw(flag.id);
      return;
    }
    await accountCall(flag, account, 'freeze', { reason });
  }

  async function accountCall(flag, account, verb, body) {
    const key = `account:${account.id}`;
    if (busy.has(key)) return;
    busy.add(key);
    reasonErrors.delete(account.id);
    for (const other of flagsWithAccount(account.id)) redraw(other.id);
    try {
      const answer = await post(`/api/admin/accounts/${account.id}/${verb}`, body);
      if (verb === 'freeze') reasons.delete(account.id);
      flags = flags.map((item) => ({ ...item, accounts: item.accounts.map((one) => (one.id === account.id ? { ...one, frozen: Boolean(answer.frozen) } : one)) }));
      toast(answer.frozen ? t('integrity.frozen_done', { name: account.name }) : t('integrity.unfrozen_done', { name: account.name }));
    } catch (failure) {
      toast(errorText(failure), 'error');
    }
    busy.delete(key);
    for (const other of flagsWithAccount(account.id)) redraw(other.id);
  }

  /** The confirmation before a reversal: what it does, a note for the audit trail, then the call. */
  function confirmReverse(flag, match) {
    const noteInput = h('input', { name: 'note', required: true, maxlength: '500', autocomplete: 'off', dataset: { key: 'reverse-note' } });
    const problem = h('p', { class: 'form-error', role: 'alert', id: 'reverse-error' });
    const submit = h('button', { type: 'submit', class: 'btn danger', id: 'reverse-confirm', text: t('integrity.reverse_confirm') });
    const dialog = h(
      'dialog',
      { class: 'panel reverse-dialog', id: 'reverse-dialog', 'aria-labelledby': 'reverse-title' },
      h(
        'form',
        { class: 'form', method: 'dialog', novalidate: true, onsubmit: (event) => { event.preventDefault(); send(); } },
        h('h2', { id: 'reverse-title', text: t('integrity.reverse_title') }),
        h('p', { text: t('integrity.reverse_match', { date: formatDate(match.finished_at), coins: formatNumber(match.coins) }) }),
        h('p', { class: 'muted', text: t('integrity.reverse_explain') }),
        h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('integrity.note_label') }), noteInput),
        problem,
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', class: 'btn ghost', id: 'reverse-cancel', onclick: () => dialog.close(), text: t('common.cancel') }),
          submit,
        ),
      ),
    );
    dialog.addEventListener('close', () => dialog.remove());
    root.append(dialog);
    dialog.showModal();
    noteInput.focus();

    async function send() {
      const note = noteInput.value.trim();
      if (!note) {
        problem.textContent = t('integrity.note_required');
        return;
      }
      const key = `match:${match.id}`;
      if (busy.has(key)) return;
      busy.add(key);
      submit.disabled = true;
      problem.textContent = '';
      try {
        const answer = await post(`/api/admin/matches/${encodeURIComponent(match.id)}/reverse`, { note });
        transfers.set(match.id, { transfers: answer.transfers || [], shortfall: answer.shortfall || 0 });
        markReversed(match.id);
        dialog.close();
        // The button is gone: keyboard focus goes to the transfers it made, in the flag it came from.
        const made = root.querySelector(`article.flag[data-flag="${flag.id}"] .flag-match[data-match="${CSS.escape(match.id)}"] .transfers`);
        if (made) {
          made.tabIndex = -1;
          made.focus();
        }
        toast(t('integrity.reversed_done', { count: (answer.transfers || []).length }));
        refreshMe(); // the admin may have played in it: the header's balance follows the ledger
      } catch (failure) {
        if (failure instanceof ApiError && failure.code === 'already_reversed') {
          markReversed(match.id);
          dialog.close();
          toast(errorText(failure), 'error');
        } else {
          problem.textContent = errorText(failure); // the dialog stays open with the note typed
          toast(errorText(failure), 'error');
        }
      }
      busy.delete(key);
      submit.disabled = false;
    }
  }

  function markReversed(matchId) {
    flags = flags.map((item) => ({ ...item, matches: item.matches.map((one) => (one.id === matchId ? { ...one, reversed: true } : one)) }));
    for (const other of flagsWithMatch(matchId)) redraw(other.id);
  }

  // ------------------------------------------------------------------ drawing

  function accountsPart(flag) {
    return h(
      'div',
      { class: 'flag-part' },
      h('h3', { text: t('integrity.accounts') }),
      h(
        'ul',
        { class: 'flag-accounts' },
        flag.accounts.map((account) => {
          const working = busy.has(`account:${account.id}`);
          const formOpen = reasons.has(account.id) && !account.frozen;
          const problem = reasonErrors.get(account.id);
          return h(
            'li',
            { class: ['flag-account', account.frozen && 'frozen'], dataset: { account: String(account.id), name: account.name } },
            h(
              'div',
              { class: 'flag-account-line' },
              h('a', { class: 'account-name', href: `/#/u/${encodeURIComponent(account.name)}`, text: account.name }),
              account.frozen ? h('span', { class: 'badge frozen', text: t('integrity.frozen_badge') }) : null,
              account.frozen
                ? h('button', { type: 'button', class: 'btn small', disabled: working, dataset: { key: `unfreeze:${account.id}`, action: 'unfreeze' }, onclick: () => accountCall(flag, account, 'unfreeze', {}), text: t('integrity.unfreeze') })
                : formOpen
                  ? null
                  : h('button', { type: 'button', class: 'btn small warn', disabled: working, dataset: { key: `freeze:${account.id}`, action: 'freeze' }, onclick: () => { reasons.set(account.id, ''); redraw(flag.id); const input = root.querySelector(`article.flag[data-flag="${flag.id}"] [data-key="reason:${account.id}"]`); if (input) input.focus(); }, text: t('integrity.freeze') }),
            ),
            formOpen
              ? h(
                  'form',
                  { class: 'form freeze-form', novalidate: true, onsubmit: (event) => { event.preventDefault(); freeze(flag, account); } },
                  h(
                    'label',
                    { class: 'field' },
                    h('span', { class: 'field-label', text: t('integrity.freeze_reason', { name: account.name }) }),
                    h('input', { name: 'reason', maxlength: '500', required: true, value: reasons.get(account.id), dataset: { key: `reason:${account.id}` }, oninput: (event) => reasons.set(account.id, event.target.value) }),
                  ),
                  problem ? h('p', { class: 'form-error', role: 'alert', text: problem }) : null,
                  h(
                    'div',
                    { class: 'actions' },
                    h('button', { type: 'submit', class: 'btn small danger', disabled: working, dataset: { key: `freeze-confirm:${account.id}`, action: 'freeze-confirm' }, text: t('integrity.freeze_confirm') }),
                    h('button', { type: 'button', class: 'btn small ghost', dataset: { key: `freeze-cancel:${account.id}` }, onclick: () => { reasons.delete(account.id); reasonErrors.delete(account.id); redraw(flag.id); }, text: t('common.cancel') }),
                  ),
                )
              : null,
          );
        }),
      ),
    );
  }

  function flowPart(flag) {
    const flow = flag.coin_flow;
    if (!flow) return null;
    const [a, b] = flag.accounts;
    const nameA = a ? a.name : 'A';
    const nameB = b ? b.name : 'B';
    const days = [...(flow.days || [])].sort((x, y) => (x.day < y.day ? 1 : x.day > y.day ? -1 : 0));
    return h(
      'div',
      { class: 'flag-part' },
      h('h3', { text: t('integrity.coin_flow') }),
      h(
        'p',
        { class: 'flow-totals' },
        h('span', { class: 'flow-total', dataset: { way: 'a_to_b' } }, t('integrity.flow_way', { from: nameA, to: nameB }), ' ', h('strong', { text: formatNumber(flow.a_to_b) })),
        h('span', { class: 'flow-total', dataset: { way: 'b_to_a' } }, t('integrity.flow_way', { from: nameB, to: nameA }), ' ', h('strong', { text: formatNumber(flow.b_to_a) })),
      ),
      days.length
        ? h(
            'table',
            { class: 'flow-table' },
            h('caption', { class: 'visually-hidden', text: t('integrity.flow_caption', { a: nameA, b: nameB }) }),
            h(
              'thead',
              {},
              h('tr', {}, h('th', { scope: 'col', rowspan: '2', text: t('integrity.day') }), h('th', { scope: 'colgroup', colspan: '2', text: t('integrity.coins') }), h('th', { scope: 'colgroup', colspan: '2', text: t('integrity.quick_wins') })),
              h('tr', {}, [t('integrity.a_to_b'), t('integrity.b_to_a'), t('integrity.wins_a'), t('integrity.wins_b')].map((text) => h('th', { scope: 'col', class: 'num', text }))),
            ),
            h(
              'tbody',
              {},
              days.map((day) =>
                h(
                  'tr',
                  { dataset: { day: day.day } },
                  h('th', { scope: 'row', text: day.day }),
                  h('td', { class: 'num', dataset: { col: 'a_to_b' }, text: formatNumber(day.a_to_b) }),
                  h('td', { class: 'num', dataset: { col: 'b_to_a' }, text: formatNumber(day.b_to_a) }),
                  h('td', { class: 'num', dataset: { col: 'quick_wins_a' }, text: formatNumber(day.quick_wins_a) }),
                  h('td', { class: 'num', dataset: { col: 'quick_wins_b' }, text: formatNumber(day.quick_wins_b) }),
                ),
              ),
            ),
          )
        : flow.a_to_b || flow.b_to_a
          ? null
          : h('p', { class: 'muted', text: t('integrity.no_flow') }),
      days.length ? h('p', { class: 'hint flow-legend', text: t('integrity.flow_legend', { a: nameA, b: nameB }) }) : null,
    );
  }

  function matchesPart(flag) {
    return h(
      'div',
      { class: 'flag-part' },
      h('h3', { text: t('integrity.matches', { count: flag.matches.length }) }),
      flag.matches.length
        ? h(
            'ul',
            { class: 'flag-matches' },
            flag.matches.map((match) => {
              const made = transfers.get(match.id);
              return h(
                'li',
                { class: ['flag-match', match.reversed && 'reversed'], dataset: { match: match.id, reversed: String(Boolean(match.reversed)) } },
                h(
                  'div',
                  { class: 'flag-match-line' },
                  h('time', { datetime: match.finished_at, text: formatDate(match.finished_at) }),
                  h('span', { class: 'match-coins', text: t('integrity.match_coins', { coins: formatNumber(match.coins) }) }),
                  h('span', { class: 'match-winner muted', text: match.winner ? t('integrity.winner', { name: match.winner }) : t('integrity.no_winner') }),
                ),
                h(
                  'div',
                  { class: 'flag-match-actions' },
                  h('a', { class: 'btn small', href: replayHref(match), text: t('history.replay') }),
                  match.reversed
                    ? h('span', { class: 'badge reversed', text: t('integrity.reversed_badge') })
                    : h('button', { type: 'button', class: 'btn small danger', disabled: busy.has(`match:${match.id}`) || match.coins === 0, dataset: { key: `reverse:${match.id}`, action: 'reverse' }, onclick: () => confirmReverse(flag, match), text: t('integrity.reverse') }),
                ),
                made ? h('p', { class: 'transfers', role: 'status' }, h('span', { class: 'muted', text: `${t('integrity.transfers')}: ` }), made.transfers.length ? transfersLine(made.transfers) : t('integrity.no_transfers')) : null,
                made && made.shortfall > 0 ? h('p', { class: 'transfers shortfall', text: t('integrity.shortfall', { coins: formatNumber(made.shortfall) }) }) : null,
              );
            }),
          )
        : h('p', { class: 'muted', text: t('integrity.no_matches') }),
    );
  }

  function decisionPart(flag) {
    const problem = noteErrors.get(flag.id);
    const button = (verdict, cls, text) =>
      h('button', {
        type: 'button',
        class: ['btn', cls],
        disabled: busy.has(`${flag.id}:dismiss`) || busy.has(`${flag.id}:warn`),
        dataset: { key: `${verdict}:${flag.id}`, action: verdict },
        onclick: () => decide(flag, verdict),
        text,
      });
    return h(
      'form',
      { class: 'form flag-decision', novalidate: true, onsubmit: (event) => event.preventDefault() },
      h(
        'label',
        { class: 'field' },
        h('span', { class: 'field-label', text: t('integrity.note_label') }),
        h('textarea', { name: 'note', rows: '2', maxlength: '1000', dataset: { key: `note:${flag.id}` }, text: notes.get(flag.id) || '', oninput: (event) => notes.set(flag.id, event.target.value) }),
      ),
      problem ? h('p', { class: 'form-error', role: 'alert', text: problem }) : null,
      h('div', { class: 'actions' }, button('warn', 'warn', t('integrity.warn')), button('dismiss', 'ghost', t('integrity.dismiss'))),
    );
  }

  function flagCard(flag) {
    return h(
      'article',
      { class: ['panel', 'flag', `status-${flag.status}`], dataset: { flag: String(flag.id), kind: flag.kind, status: flag.status } },
      h(
        'header',
        { class: 'flag-head' },
        h('h2', {}, h('a', { href: `/#/admin/integrity/${flag.id}`, class: 'flag-link', text: kindText(flag.kind) })),
        h('span', { class: ['badge', 'flag-status', flag.status], text: statusText(flag.status) }),
        h('span', { class: 'muted flag-meta', text: `#${flag.id} · ${formatDate(flag.created_at)}` }),
      ),
      h('p', { class: 'flag-summary', text: flag.summary }),
      flag.note ? h('p', { class: 'flag-note' }, h('span', { class: 'muted', text: `${t('integrity.note')}: ` }), flag.note) : null,
      h('div', { class: 'flag-body' }, h('div', { class: 'flag-col' }, accountsPart(flag), flowPart(flag)), h('div', { class: 'flag-col' }, matchesPart(flag))),
      decisionPart(flag),
    );
  }

  function filterBar() {
    return h(
      'div',
      { class: 'filter-tabs', role: 'group', 'aria-label': t('integrity.filter') },
      STATUSES.map((name) =>
        h('button', {
          type: 'button',
          class: ['btn', 'small', name === status ? 'primary' : 'ghost'],
          'aria-pressed': String(name === status),
          dataset: { status: name },
          onclick: () => {
            if (name === status) return;
            status = name;
            page = 1;
            flags = null;
            try {
              sessionStorage.setItem(STATUS_KEY, status);
            } catch {
              // private mode: for this page only
            }
            render();
            load();
          },
          text: statusText(name),
        }),
      ),
    );
  }

  function render() {
    if (gone) return; // another page took the screen: a late answer draws nothing
    const me = currentUser();
    if (!me || !me.is_admin) {
      root.replaceChildren(h('div', { class: 'page narrow' }, h('h1', { text: t('admin.title') }), h('p', { class: 'notice', text: t('admin.only') })));
      return;
    }
    const body = [];
    if (single) body.push(h('p', {}, h('a', { href: '/#/admin/integrity', id: 'all-flags', text: t('integrity.all_flags') })));
    else body.push(h('div', { class: 'flags-head' }, filterBar(), flags ? h('span', { class: 'muted', id: 'flag-count', text: t('integrity.flag_count', { count: total }) }) : null));
    if (error) body.push(h('p', { class: 'form-error', role: 'alert', id: 'flags-error', text: error }));
    else if (!flags) body.push(h('p', { class: 'muted', text: t('common.loading') }));
    else if (!flags.length) body.push(h('p', { class: 'empty-state', id: 'no-flags', text: t('integrity.none') }));
    else {
      body.push(h('div', { class: 'flag-list', id: 'flags' }, flags.map(flagCard)));
      if (!single) body.push(pager(page, Math.max(1, Math.ceil(total / PAGE_SIZE)), (to) => { page = to; flags = null; render(); load(); window.scrollTo(0, 0); }));
    }
    root.replaceChildren(
      h(
        'div',
        { class: 'page admin-page integrity-page' },
        h('h1', { text: t('admin.title') }),
        adminTabs('integrity'),
        h('p', { class: 'muted integrity-intro', text: t('integrity.intro') }),
        body,
      ),
    );
  }

  let gone = false;
  render();
  load();
  // The session is looked at again every 20 s: redraw only when being an admin changed (a redraw
  // would take the focus from a note being typed).
  let admin = Boolean(currentUser() && currentUser().is_admin);
  const off = onSignInChange((me) => {
    const now = Boolean(me && me.is_admin);
    if (now === admin) return;
    admin = now;
    flags = null;
    error = '';
    render();
    load();
  });
  return {
    relabel: render,
    unmount: () => {
      gone = true;
      off();
    },
  };
}
