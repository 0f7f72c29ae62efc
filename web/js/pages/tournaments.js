// Arena tournaments: the list (/#/tournaments) with a form to schedule one (free for players, with an
// entry fee for admins), and a tournament's page (/#/tournaments/<id>): the countdown, join or leave,
// "my next table" (the page goes there by itself when the arena seats you), the live standings and
// the tables playing now to watch, all kept up to date by the tournament's event stream.
import { errorText, get, post } from '../api.js';
import { h } from '../dom.js';
import { formatDate, formatNumber, t } from '../i18n.js';
import { rulesChips } from '../rules.js';
import { currentUser, onSignInChange } from '../session.js';
import { toast } from '../toast.js';

function clockText(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const hh = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return hh ? `${hh}:${mm}:${ss}` : `${mm}:${ss}`;
}

function statusText(status) {
  return { scheduled: t('tournaments.scheduled'), running: t('tournaments.running'), finished: t('tournaments.finished'), cancelled: t('tournaments.cancelled') }[status] || status;
}

function feeText(fee) {
  return fee > 0 ? t('tournaments.fee', { coins: formatNumber(fee) }) : t('tournaments.free');
}

/** The countdown's target and label: to the start, then to the end. */
function countdown(tournament) {
  if (tournament.status === 'scheduled') return [Date.parse(tournament.starts_at), t('tournaments.starts_in')];
  if (tournament.status === 'running') return [Date.parse(tournament.ends_at), t('tournaments.ends_in')];
  return [null, ''];
}

export function mount(root, params = {}) {
  return params.id ? mountOne(root, Number(params.id)) : mountList(root);
}

function mountList(root) {
  let data = null;
  let error = '';
  let skew = 0; // server clock - this clock
  let formOpen = false;
  let form = null; // the schedule form, built once when opened: a refresh of the list keeps what was typed
  let gone = false; // another page took the screen: a late answer draws nothing
  const ticker = setInterval(() => tick(), 1000);

  async function load() {
    try {
      const answer = await get('/api/tournaments');
      if (gone) return;
      data = answer;
      skew = Date.parse(data.server_time) - Date.now();
      error = '';
    } catch (failure) {
      if (gone) return;
      error = errorText(failure);
    }
    render();
  }

  function tick() {
    for (const el of root.querySelectorAll('[data-until]')) el.textContent = clockText(Number(el.dataset.until) - (Date.now() + skew));
  }

  function card(item) {
    const [until, label] = countdown(item);
    return h(
      'li',
      { class: ['panel', 'tournament-card', `status-${item.status}`], dataset: { id: String(item.id) } },
      h('a', { class: 'tournament-name', href: `/#/tournaments/${item.id}`, text: item.name }),
      h(
        'p',
        { class: 'tournament-facts' },
        h('span', { class: ['badge', `badge-${item.status}`], text: statusText(item.status) }),
        h('span', { text: t('tournaments.table_of', { seats: item.seats }) }),
        h('span', { text: feeText(item.entry_fee) }),
        h('span', { text: t('tournaments.players', { players: item.players ?? 0 }) }),
      ),
      until ? h('p', { class: 't-countdown' }, h('span', { text: `${label} ` }), h('strong', { dataset: { until: String(until) }, text: clockText(until - (Date.now() + skew)) })) : h('p', { class: 'muted', text: formatDate(item.starts_at) }),
    );
  }

  function createForm() {
    const me = currentUser();
    const field = (label, control) => h('label', { class: 'field' }, h('span', { text: label }), control);
    const soon = new Date(Date.now() + 10 * 60000);
    soon.setSeconds(0, 0);
    const local = new Date(soon.getTime() - soon.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
    const made = h(
      'form',
      {
        class: 'panel tournament-form',
        id: 'tournament-form',
        onsubmit: async (event) => {
          event.preventDefault();
          const f = new FormData(made);
          const body = {
            name: String(f.get('name')).trim(),
            seats: Number(f.get('seats')),
            deck: Number(f.get('deck')),
            starts_at: new Date(String(f.get('starts_at'))).toISOString(),
            duration_min: Number(f.get('duration_min')),
            entry_fee: me && me.is_admin ? Number(f.get('entry_fee') || 0) : 0,
          };
          try {
            const made = await post('/api/tournaments', body);
            location.hash = `#/tournaments/${made.id}`;
          } catch (failure) {
            toast(errorText(failure), 'error');
          }
        },
      },
      field(t('tournaments.name'), h('input', { name: 'name', required: true, maxlength: 64, value: t('tournaments.default_name') })),
      field(t('tournaments.seats'), h('select', { name: 'seats' }, [2, 3, 4, 5, 6].map((n) => h('option', { value: String(n), text: String(n) })))),
      field(t('tournaments.deck'), h('select', { name: 'deck' }, [24, 36, 52].map((n) => h('option', { value: String(n), selected: n === 36, text: String(n) })))),
      field(t('tournaments.start'), h('input', { name: 'starts_at', type: 'datetime-local', required: true, value: local })),
      field(t('tournaments.duration'), h('input', { name: 'duration_min', type: 'number', min: 1, max: 1440, value: 30, required: true })),
      me && me.is_admin ? field(t('tournaments.entry_fee'), h('input', { name: 'entry_fee', type: 'number', min: 0, value: 0 })) : h('p', { class: 'muted', text: t('tournaments.players_free_only') }),
      h('button', { type: 'submit', class: 'btn primary', text: t('tournaments.schedule') }),
    );
    return made;
  }

  /** A new schedule form with the values of the old one (a new language relabels it). */
  function rebuildForm() {
    const old = form;
    form = createForm();
    if (!old) return;
    for (const control of old.elements) {
      const again = control.name ? form.elements.namedItem(control.name) : null;
      if (again && 'value' in again) again.value = control.value;
    }
  }

  // The parts of the page: a refresh of the list replaces the list, never the form above it.
  const title = h('h1', {});
  const errorBox = h('p', { class: 'panel error' });
  const newButton = h('button', { class: 'btn', id: 'tournament-new', type: 'button', onclick: () => toggleForm() });
  const empty = h('p', { class: 'panel muted', id: 'tournaments-empty' });
  const list = h('ul', { class: 'tournament-list', id: 'tournament-list' });

  function toggleForm() {
    formOpen = !formOpen;
    if (formOpen && !form) form = createForm();
    render();
  }

  function render() {
    if (gone) return;
    const me = currentUser();
    const account = Boolean(me && me.kind === 'account');
    if (!account) formOpen = false;
    if (!formOpen) form = null;
    const items = data ? data.tournaments : [];
    title.textContent = t('tournaments.title');
    errorBox.textContent = error;
    newButton.textContent = t('tournaments.new');
    newButton.setAttribute('aria-expanded', String(formOpen));
    empty.textContent = t('tournaments.none');
    list.replaceChildren(...items.map(card));
    const parts = [title, error ? errorBox : null, account ? newButton : null, formOpen ? form : null, data && !items.length ? empty : null, list].filter(Boolean);
    // Only when the parts themselves change (the form opened or closed, an error came or went).
    const now = [...root.children];
    if (now.length !== parts.length || now.some((el, i) => el !== parts[i])) root.replaceChildren(...parts);
  }

  function relabel() {
    if (form) rebuildForm();
    render();
  }

  render();
  load();
  const off = onSignInChange(() => render()); // the form was his: a new player gets a new one
  return {
    unmount: () => {
      gone = true;
      clearInterval(ticker);
      off();
    },
    relabel,
  };
}

function mountOne(root, id) {
  let state = null;
  let me = null;
  let error = '';
  let skew = 0;
  let source = null;
  let wentTo = null;
  let gone = false; // another page took the screen: a late answer draws nothing, no stream opens
  const ticker = setInterval(() => tick(), 1000);

  async function load() {
    try {
      const page = await get(`/api/tournaments/${id}`);
      if (gone) return;
      me = page.me;
      take(page);
      error = '';
    } catch (failure) {
      if (gone) return;
      error = errorText(failure);
    }
    render();
  }

  function take(page) {
    state = page;
    skew = Date.parse(page.server_time) - Date.now();
  }

  function follow() {
    if (gone) return;
    source = new EventSource(`/api/tournaments/${id}/events`);
    source.addEventListener('standings', (event) => {
      take(JSON.parse(event.data));
      render();
    });
    source.addEventListener('table', (event) => {
      const { code } = JSON.parse(event.data);
      me = { ...(me || { entered: true }), table: code };
      render();
      if (wentTo !== code && document.visibilityState === 'visible') {
        wentTo = code; // the arena seated you: to the table at once
        location.assign(`/t/${code}`);
      }
    });
  }

  function tick() {
    for (const el of root.querySelectorAll('[data-until]')) el.textContent = clockText(Number(el.dataset.until) - (Date.now() + skew));
  }

  async function act(path) {
    try {
      const answer = await post(path);
      if (gone) return;
      me = answer;
      await load();
    } catch (failure) {
      toast(errorText(failure), 'error');
    }
  }

  function actions(tournament) {
    const user = currentUser();
    if (!user || user.kind !== 'account') return h('p', { class: 'muted', text: t('tournaments.sign_in') });
    if (!['scheduled', 'running'].includes(tournament.status)) return null;
    const entered = me && me.entered && me.status === 'active';
    return h(
      'div',
      { class: 'tournament-actions' },
      me && me.table ? h('a', { class: 'btn primary', id: 'my-table', href: `/t/${me.table}`, text: t('tournaments.my_table') }) : null,
      entered && !(me && me.table) ? h('p', { class: 'waiting', id: 'my-wait', text: tournament.status === 'running' ? t('tournaments.pairing') : t('tournaments.entered') }) : null,
      entered
        ? h('button', { class: 'btn', id: 'tournament-leave', type: 'button', text: tournament.status === 'running' ? t('tournaments.pause') : t('tournaments.leave'), onclick: () => act(`/api/tournaments/${id}/leave`) })
        : h('button', { class: 'btn primary', id: 'tournament-join', type: 'button', text: tournament.entry_fee > 0 ? t('tournaments.join_fee', { coins: formatNumber(tournament.entry_fee) }) : t('tournaments.join'), onclick: () => act(`/api/tournaments/${id}/join`) }),
    );
  }

  function standings(rows) {
    if (!rows.length) return h('p', { class: 'muted', text: t('tournaments.no_players') });
    return h(
      'table',
      { class: 'data-table standings', id: 'standings' },
      h('thead', {}, h('tr', {}, h('th', { text: '#' }), h('th', { text: t('tournaments.player') }), h('th', { text: t('tournaments.points') }), h('th', { text: t('tournaments.matches') }), h('th', { text: t('tournaments.prize') }))),
      h(
        'tbody',
        {},
        rows.map((row) =>
          h(
            'tr',
            { class: ['standing-row', row.playing && 'playing', row.status !== 'active' && 'paused'], dataset: { name: row.name } },
            h('td', { class: 'rank', text: String(row.rank) }),
            h('td', {}, h('a', { href: `/#/u/${encodeURIComponent(row.name)}`, text: row.name }), row.playing ? h('span', { class: 'dot', title: t('tournaments.at_table'), 'aria-label': t('tournaments.at_table') }) : null),
            h('td', { class: 'points', text: String(row.points) }),
            h('td', { text: String(row.matches) }),
            h('td', { text: row.prize ? formatNumber(row.prize) : '' }),
          ),
        ),
      ),
    );
  }

  function render() {
    if (gone) return;
    if (!state) {
      root.replaceChildren(error ? h('p', { class: 'panel error', text: error }) : h('p', { class: 'muted', text: '…' }));
      return;
    }
    const tournament = state.tournament;
    const [until, label] = countdown(tournament);
    root.replaceChildren(
      ...[
      h('p', {}, h('a', { href: '/#/tournaments', text: `← ${t('tournaments.title')}` })),
      h('h1', { id: 'tournament-title', text: tournament.name }),
      h(
        'section',
        { class: 'panel tournament-head' },
        h('p', { class: 'tournament-facts' }, h('span', { class: ['badge', `badge-${tournament.status}`], text: statusText(tournament.status) }), h('span', { text: feeText(tournament.entry_fee) }), tournament.pool ? h('span', { text: t('tournaments.pool', { coins: formatNumber(tournament.pool) }) }) : null),
        until ? h('p', { class: 't-countdown', id: 'countdown' }, h('span', { text: `${label} ` }), h('strong', { dataset: { until: String(until) }, text: clockText(until - (Date.now() + skew)) })) : null,
        tournament.reason ? h('p', { class: 'muted', text: tournament.reason }) : null,
        rulesChips(tournament.rules, { compact: false }),
        actions(tournament),
      ),
      h('h2', { text: t('tournaments.standings') }),
      standings(state.standings),
      state.tables.length ? h('h2', { text: t('tournaments.tables_now') }) : null,
      state.tables.length
        ? h('ul', { class: 'arena-tables', id: 'arena-tables' }, state.tables.map((table) => h('li', { class: 'panel' }, h('span', { text: table.players.join(' · ') }), h('a', { class: 'btn', href: `/w/${table.watch_code}`, text: t('tournaments.watch') }))))
        : null,
      ].filter(Boolean),
    );
  }

  render();
  load().then(follow);
  const off = onSignInChange(() => load()); // join or leave are his: another player sees his own
  return {
    unmount: () => {
      gone = true;
      off();
      clearInterval(ticker);
      if (source) source.close();
    },
    relabel: render,
  };
}
