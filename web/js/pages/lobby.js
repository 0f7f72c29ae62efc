// The lobby: "Play now" and "Play a bot", then the open and running public tables, live from
// /api/lobby/stream (a snapshot when it connects, then one delta per table change), with filters,
// a page at a time.
import { post } from '../api.js';
import { authPanel } from '../auth.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { integritySlot, refusalText } from '../integrity.js';
import { askPermission } from '../notify.js';
import { ratingText } from '../rating.js';
import { rulesChips } from '../rules.js';
import { namesWithBadges } from '../table/render.js';
import { currentUser, onUserChange } from '../session.js';

const FILTER_KEY = 'durak.lobby.filters';
const PAGE_SIZE = 20;

function loadFilters() {
  try {
    return JSON.parse(sessionStorage.getItem(FILTER_KEY)) || {};
  } catch {
    return {};
  }
}

/**
 * Apply one lobby event to the tables (code -> row): `snapshot` replaces them all, `added` and
 * `changed` put one table's row, `removed` takes one table away.
 */
export function applyLobbyEvent(tables, kind, data) {
  if (kind === 'snapshot') {
    tables.clear();
    for (const row of data.tables) tables.set(row.code, row);
  } else if (kind === 'added' || kind === 'changed') {
    tables.set(data.code, data);
  } else if (kind === 'removed') {
    tables.delete(data.code);
  }
  return tables;
}

/** The server's own filter semantics (GET /api/tables), applied to the live feed. */
export function matches(row, filters) {
  // A finished table stays in the feed while its players look at the result; nobody can join it.
  if (row.status === 'finished') return false;
  const rules = row.rules;
  if (filters.deck && rules.deck !== Number(filters.deck)) return false;
  if (filters.seats && rules.seats !== Number(filters.seats)) return false;
  if (filters.stake_min !== undefined && filters.stake_min !== '' && rules.stake < Number(filters.stake_min)) return false;
  if (filters.stake_max !== undefined && filters.stake_max !== '' && rules.stake > Number(filters.stake_max)) return false;
  if (filters.transfer === 'on' && !rules.transfer) return false;
  if (filters.transfer === 'off' && rules.transfer) return false;
  if (filters.circle && rules.circle !== filters.circle) return false;
  return true;
}

export function mount(root) {
  let tables = null; // code -> row, once the snapshot came
  let page = 0;
  let live = false;
  let filters = loadFilters();
  let source = null;
  let retry = null;
  const seen = new Set(); // table codes already shown: only new rows animate in
  const list = h('div', { class: 'table-list', id: 'lobby-tables', 'aria-live': 'polite' });
  const status = h('span', { class: 'live-dot', id: 'lobby-live' });

  function connect() {
    source = new EventSource('/api/lobby/stream');
    for (const kind of ['snapshot', 'added', 'changed', 'removed']) {
      source.addEventListener(kind, (event) => {
        tables = applyLobbyEvent(tables || new Map(), kind, JSON.parse(event.data));
        live = true;
        renderList();
      });
    }
    source.onerror = () => {
      live = false;
      renderStatus();
      if (source.readyState === EventSource.CLOSED) {
        retry = setTimeout(connect, 2000);
      }
    };
  }

  function renderStatus() {
    status.className = ['live-dot', live ? 'on' : 'off'].join(' ');
    status.textContent = live ? t('lobby.live') : t('lobby.offline');
  }

  function renderList() {
    renderStatus();
    if (tables === null) {
      list.replaceChildren(h('p', { class: 'muted', text: t('common.loading') }));
      return;
    }
    const shown = [...tables.values()].filter((row) => matches(row, filters)).sort((a, b) => b.created - a.created);
    if (!shown.length) {
      list.replaceChildren(
        h('div', { class: 'empty-state' }, h('p', { text: tables.size ? t('lobby.none_match') : t('lobby.none') }), h('a', { class: 'btn primary', href: '/#/create', text: t('lobby.open_table') })),
      );
      return;
    }
    const pages = Math.ceil(shown.length / PAGE_SIZE);
    page = Math.min(page, pages - 1);
    const first = page * PAGE_SIZE;
    const rows = shown.slice(first, first + PAGE_SIZE).map(tableRow);
    if (pages > 1) rows.push(pager(first, Math.min(first + PAGE_SIZE, shown.length), shown.length, pages));
    list.replaceChildren(...rows);
  }

  function pager(from, to, total, pages) {
    const turn = (by) => () => {
      page += by;
      renderList();
    };
    return h(
      'nav',
      { class: 'pager', id: 'lobby-pager', 'aria-label': t('lobby.pages') },
      h('button', { type: 'button', class: 'btn ghost', id: 'lobby-prev', disabled: page === 0, onclick: turn(-1), text: t('lobby.page_prev') }),
      h('span', { class: 'page-range muted', text: t('lobby.page_range', { from: from + 1, to, total }) }),
      h('button', { type: 'button', class: 'btn ghost', id: 'lobby-next', disabled: page >= pages - 1, onclick: turn(1), text: t('lobby.page_next') }),
    );
  }

  function tableRow(row) {
    const seated = row.seats.filter((seat) => seat.kind !== 'empty');
    const canJoin = row.status !== 'playing' && row.free_seats > 0;
    const fresh = !seen.has(row.code);
    seen.add(row.code);
    return h(
      'article',
      { class: ['table-row', fresh && 'appear'], dataset: { code: row.code } },
      h(
        'div',
        { class: 'table-row-main' },
        h('h3', { class: 'table-name', text: row.name }),
        rulesChips(row.rules, { compact: true }),
        h(
          'p',
          { class: 'table-meta' },
          h('span', { class: 'seat-count', text: t('lobby.seats_taken', { taken: seated.length, seats: row.rules.seats }) }),
          ' · ',
          h('span', { class: 'free-seats', text: t('lobby.free_seats', { count: row.free_seats }) }),
          ' · ',
          h('span', { class: 'spectators', text: t('lobby.spectators', { count: row.spectators }) }),
          ' · ',
          h('span', { class: ['status', `status-${row.status}`], text: statusText(row.status) }),
        ),
        seated.length ? h('p', { class: 'players muted' }, seatLabels(seated)) : null,
      ),
      h(
        'div',
        { class: 'table-row-actions' },
        h('a', {
          class: ['btn', canJoin ? 'primary' : 'ghost'],
          href: `/t/${encodeURIComponent(row.code)}`,
          'aria-label': `${canJoin ? t('lobby.join') : t('lobby.watch')}: ${row.name}`,
          text: canJoin ? t('lobby.join') : t('lobby.watch'),
        }),
      ),
    );
  }

  function filterSelect(name, label, options) {
    return h(
      'label',
      { class: 'field inline' },
      h('span', { class: 'field-label', text: label }),
      h(
        'select',
        { name, onchange: onFilter },
        options.map(([value, text]) => h('option', { value, text, selected: String(filters[name] ?? '') === value })),
      ),
    );
  }

  function onFilter(event) {
    const form = event.target.form;
    const data = new FormData(form);
    filters = Object.fromEntries([...data.entries()].filter(([, value]) => value !== ''));
    sessionStorage.setItem(FILTER_KEY, JSON.stringify(filters));
    page = 0;
    renderList();
  }

  function render() {
    const me = currentUser();
    const any = t('filter.any');
    const filterForm = h(
      'form',
      { class: 'filters', id: 'lobby-filters', 'aria-label': t('filter.label'), onsubmit: (event) => event.preventDefault() },
      filterSelect('deck', t('filter.deck'), [['', any], ['24', '24'], ['36', '36'], ['52', '52']]),
      filterSelect('seats', t('filter.seats'), [['', any], ...[2, 3, 4, 5, 6].map((n) => [String(n), String(n)])]),
      h(
        'label',
        { class: 'field inline' },
        h('span', { class: 'field-label', text: t('filter.stake_min') }),
        h('input', { name: 'stake_min', type: 'number', min: '0', inputmode: 'numeric', value: filters.stake_min ?? '', oninput: onFilter }),
      ),
      h(
        'label',
        { class: 'field inline' },
        h('span', { class: 'field-label', text: t('filter.stake_max') }),
        h('input', { name: 'stake_max', type: 'number', min: '0', inputmode: 'numeric', value: filters.stake_max ?? '', oninput: onFilter }),
      ),
      filterSelect('transfer', t('filter.transfer'), [['', any], ['on', t('filter.on')], ['off', t('filter.off')]]),
      filterSelect('circle', t('filter.circle'), [['', any], ['neighbours', t('rules.circle_neighbours')], ['all', t('rules.circle_all')]]),
    );
    root.replaceChildren(
      h(
        'div',
        { class: 'page lobby' },
        me && me.kind === 'account' ? integritySlot() : null,
        h(
          'section',
          { class: 'hero' },
          h('div', {}, h('h1', { text: t('lobby.title') }), h('p', { class: 'lead', text: t('lobby.tagline') })),
          h('a', { class: 'btn big', href: '/#/create', id: 'open-table', text: t('lobby.open_table') }),
        ),
        playNowSection(),
        me ? null : h('div', { class: 'lobby-auth' }, h('h2', { text: t('lobby.sign_in_title') }), authPanel({ initial: 'signup' })),
        h(
          'section',
          { class: 'panel' },
          h('div', { class: 'panel-head' }, h('h2', { text: t('lobby.open_tables') }), status),
          filterForm,
          list,
        ),
      ),
    );
    renderList();
  }

  render();
  connect();
  const off = onUserChange(render);
  return {
    relabel: render,
    unmount() {
      off();
      clearTimeout(retry);
      if (source) source.close();
    },
  };
}

function statusText(status) {
  switch (status) {
    case 'playing':
      return t('status.playing');
    case 'finished':
      return t('status.finished');
    default:
      return t('status.waiting');
  }
}

// ---------------------------------------------------------------------- Play now / Play a bot

const QUICKPLAY_KEY = 'durak.quickplay';
const BOT_LEVEL_KEY = 'durak.quickplay.bot';

/** The seated players as the lobby lists them: each name with its guest badge or its rating. */
function seatLabels(seats) {
  return namesWithBadges(seats).map((parts, i) => {
    const rating = ratingText(seats[i].rating);
    return rating ? [parts, ` (${rating})`] : parts;
  });
}

/** The last used quick-play preferences: {deck, seats, transfer, stake, timer}, each optional. */
export function loadQuickplay() {
  try {
    const saved = JSON.parse(localStorage.getItem(QUICKPLAY_KEY));
    return saved && typeof saved === 'object' ? saved : {};
  } catch {
    return {};
  }
}

function saveQuickplay(prefs) {
  try {
    localStorage.setItem(QUICKPLAY_KEY, JSON.stringify(prefs));
  } catch {
    // private mode: the preferences last for this page only
  }
}

function quickplaySummary(prefs) {
  const parts = [];
  if (prefs.deck) parts.push(t('playnow.deck_n', { count: prefs.deck }));
  if (prefs.seats) parts.push(t('playnow.seats_n', { count: prefs.seats }));
  if (prefs.transfer !== undefined) parts.push(prefs.transfer ? t('playnow.transfer_on') : t('playnow.transfer_off'));
  if (prefs.stake) parts.push(t('playnow.stake_n', { count: prefs.stake }));
  if (prefs.timer !== undefined) parts.push(prefs.timer ? t('playnow.timer_n', { count: prefs.timer }) : t('playnow.no_timer'));
  return parts.length ? parts.join(' · ') : t('playnow.any_table');
}

function playNowSection() {
  let prefs = loadQuickplay();
  let busy = false;
  const error = h('p', { class: 'form-error', role: 'alert', id: 'play-now-error' });
  const summary = h('p', { class: 'muted', id: 'play-now-summary', text: quickplaySummary(prefs) });

  async function go(path, body, button) {
    if (busy) return;
    askPermission(); // from this click: browsers ask only during a user gesture
    busy = true;
    button.disabled = true;
    error.textContent = '';
    try {
      const answer = await post(path, body);
      location.assign(`/t/${encodeURIComponent(answer.code)}`);
    } catch (failure) {
      error.textContent = await refusalText(failure);
      busy = false;
      button.disabled = false;
    }
  }

  function select(name, label, options, value) {
    return h(
      'label',
      { class: 'field inline' },
      h('span', { class: 'field-label', text: label }),
      h('select', { name, onchange: onPrefs }, options.map(([key, text]) => h('option', { value: key, text, selected: String(value ?? '') === key }))),
    );
  }

  function onPrefs(event) {
    const data = Object.fromEntries(new FormData(event.target.form).entries());
    prefs = {};
    if (data.deck) prefs.deck = Number(data.deck);
    if (data.seats) prefs.seats = Number(data.seats);
    if (data.transfer) prefs.transfer = data.transfer === 'on';
    if (data.stake && Number(data.stake) > 0) prefs.stake = Number(data.stake);
    if (data.timer !== '') prefs.timer = Number(data.timer);
    saveQuickplay(prefs);
    summary.textContent = quickplaySummary(prefs);
  }

  const any = t('filter.any');
  const transfer = prefs.transfer === undefined ? '' : prefs.transfer ? 'on' : 'off';
  const form = h(
    'form',
    { class: 'filters', id: 'play-now-prefs', onsubmit: (event) => event.preventDefault() },
    select('deck', t('filter.deck'), [['', any], ['24', '24'], ['36', '36'], ['52', '52']], prefs.deck),
    select('seats', t('filter.seats'), [['', any], ...[2, 3, 4, 5, 6].map((n) => [String(n), String(n)])], prefs.seats),
    select('transfer', t('filter.transfer'), [['', any], ['on', t('filter.on')], ['off', t('filter.off')]], transfer),
    select('timer', t('playnow.timer'), [['', any], ['0', t('playnow.no_timer')], ...[15, 30, 60].map((n) => [String(n), t('playnow.timer_n', { count: n })])], prefs.timer),
    h(
      'label',
      { class: 'field inline' },
      h('span', { class: 'field-label', text: t('playnow.stake') }),
      h('input', { name: 'stake', type: 'number', min: '0', inputmode: 'numeric', value: prefs.stake ?? '', oninput: onPrefs }),
    ),
  );
  const playNow = h('button', { type: 'button', class: 'btn primary big', id: 'play-now', text: t('playnow.button') });
  playNow.addEventListener('click', () => go('/api/quickplay', loadQuickplay(), playNow));

  let level = 'normal';
  try {
    level = localStorage.getItem(BOT_LEVEL_KEY) || 'normal';
  } catch {
    // keep the default
  }
  const levelSelect = h(
    'select',
    { id: 'bot-level', 'aria-label': t('playnow.bot_level'), onchange: (event) => { level = event.target.value; try { localStorage.setItem(BOT_LEVEL_KEY, level); } catch { /* this page only */ } } },
    [['easy', t('bot.easy')], ['normal', t('bot.normal')], ['hard', t('bot.hard')]].map(([name, text]) => h('option', { value: name, text, selected: name === level })),
  );
  const playBot = h('button', { type: 'button', class: 'btn big', id: 'play-bot', text: t('playnow.bot_button') });
  playBot.addEventListener('click', () => go('/api/quickplay/bot', { level }, playBot));

  return h(
    'section',
    { class: 'panel play-now', id: 'play-now-panel', 'aria-label': t('playnow.title') },
    h('div', { class: 'play-now-actions' }, playNow, summary, h('span', { class: 'play-bot' }, levelSelect, playBot)),
    h('details', {}, h('summary', { text: t('playnow.preferences') }), form),
    error,
  );
}
