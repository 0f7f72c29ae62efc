// The lobby: "Play now" and "Play a bot" (one tap, signed in or not: the server makes a guest on the
// spot), "My tables" (each with Open, and Close for a waiting one), then the open and running public
// tables, live from /api/lobby/stream (a snapshot when it connects, then one delta per table change),
// with filters, a page at a time.
import { errorText, get, post } from '../api.js';
import { authPanel } from '../auth.js';
import { append, h } from '../dom.js';
import { t } from '../i18n.js';
import { integritySlot, refusalText } from '../integrity.js';
import { navigate } from '../main.js';
import { askPermission } from '../notify.js';
import { ratingText } from '../rating.js';
import { rulesChips } from '../rules.js';
import { namesWithBadges } from '../table/render.js';
import { tableTitle } from '../table/describe.js';
import { currentUser, onSignInChange, onUserChange, signInChanged, suggestedGuestName } from '../session.js';
import { toast } from '../toast.js';
import { joinRefusal, startSearch } from '../playflow.js';

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
        h('div', { class: 'empty-state' }, h('p', { text: tables.size ? t('lobby.none_match') : t('lobby.none') })),
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
    const refusal = canJoin ? joinRefusal(row.rules.stake) : null;
    const fresh = !seen.has(row.code);
    seen.add(row.code);
    const href = `/t/${encodeURIComponent(row.code)}`;
    let actions;
    if (canJoin && refusal) {
      // A seat the viewer cannot afford: the button says why instead of leading to a refusal.
      const why = `why-${row.code}`;
      actions = [
        h('button', { type: 'button', class: 'btn', disabled: true, 'aria-describedby': why, 'aria-label': `${t('lobby.join')}: ${tableTitle(row.name)}`, text: t('lobby.join') }),
        h('a', { class: 'btn ghost', href, 'aria-label': `${t('lobby.watch')}: ${tableTitle(row.name)}`, text: t('lobby.watch') }),
        h('p', { class: 'join-refusal', id: why, text: refusal }),
      ];
    } else {
      actions = [
        h('a', {
          class: ['btn', canJoin ? 'primary' : 'ghost'],
          href,
          'aria-label': `${canJoin ? t('lobby.join') : t('lobby.watch')}: ${tableTitle(row.name)}`,
          text: canJoin ? t('lobby.join') : t('lobby.watch'),
        }),
      ];
    }
    return h(
      'article',
      { class: ['table-row', fresh && 'appear'], dataset: { code: row.code } },
      h(
        'div',
        { class: 'table-row-main' },
        h('h3', { class: 'table-name', text: tableTitle(row.name) }),
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
      h('div', { class: 'table-row-actions' }, actions),
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
    const active = Object.keys(filters).length;
    // Phones fold the filters (they would push the tables off the first screen); wide screens show them.
    const filterBox = h(
      'details',
      { class: 'filter-box', open: WIDE.matches || active > 0 },
      h('summary', { text: active ? t('lobby.filters_n', { count: active }) : t('lobby.filters') }),
      filterForm,
    );
    root.replaceChildren(
      h(
        'div',
        { class: 'page lobby' },
        me && me.kind === 'account' ? integritySlot() : null,
        playNowSection({ onTooMany: () => mine.reload(true) }),
        mine.el,
        // Above the live list: a list that fills in after the first paint moves nothing under it.
        me ? null : h('div', { class: 'lobby-auth' }, h('h2', { text: t('lobby.sign_in_title') }), h('p', { class: 'muted', text: t('lobby.sign_in_why') }), authPanel({ initial: 'signup' })),
        h(
          'section',
          { class: 'panel', id: 'open-tables' },
          h('div', { class: 'panel-head' }, h('h2', { text: t('lobby.open_tables') }), status),
          filterBox,
          list,
          h('p', { class: 'open-table-line' }, h('a', { class: 'btn', href: '/#/create', id: 'open-table', text: t('lobby.open_table') })),
        ),
      ),
    );
    renderList();
  }

  const mine = myTables();
  render();
  connect();
  // Another player: the whole page (his tables, his forms). His coins only: the Join buttons he can
  // afford; the forms (the sign-in panel, the preferences, the filters) keep what was typed.
  const offSignIn = onSignInChange(() => {
    mine.reload();
    render();
  });
  const offCoins = onUserChange((me, change) => {
    if (!change.signIn) renderList();
  });
  return {
    relabel() {
      mine.reload();
      render();
    },
    unmount() {
      offSignIn();
      offCoins();
      mine.stop();
      clearTimeout(retry);
      if (source) source.close();
    },
  };
}

const WIDE = window.matchMedia('(min-width: 760px)');

// ---------------------------------------------------------------------- My tables

/** The viewer's tables that wait or play (GET /api/me/tables): Open, and Close for a waiting one he
 * opened. The section stays out of the page while there are none. */
const MY_TABLES_KEY = 'durak.mytables'; // the last list this tab saw: drawn at once, then refreshed

function myTables() {
  const el = h('section', { class: 'panel my-tables', id: 'my-tables', hidden: true, 'aria-labelledby': 'my-tables-title' });
  let stopped = false;
  let rows = [];
  let limit = 3;
  let highlight = false;
  try {
    // The list as it was, so that the lobby does not jump down when the fresh one arrives.
    const kept = JSON.parse(sessionStorage.getItem(MY_TABLES_KEY));
    const me = currentUser();
    if (kept && me && kept.user === me.name && Array.isArray(kept.rows)) ({ rows, limit } = kept);
  } catch {
    // nothing kept
  }

  async function reload(fromRefusal = false) {
    if (fromRefusal) highlight = true;
    if (!currentUser()) {
      rows = [];
      draw();
      return;
    }
    try {
      const answer = await get('/api/me/tables');
      if (stopped) return;
      rows = answer.tables;
      limit = answer.waiting_limit;
      try {
        sessionStorage.setItem(MY_TABLES_KEY, JSON.stringify({ user: currentUser() && currentUser().name, rows, limit }));
      } catch {
        // this page only
      }
    } catch {
      return; // keep what is shown
    }
    draw();
    if (fromRefusal && !el.hidden) el.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  async function close(row, button) {
    button.disabled = true;
    try {
      await post(`/api/tables/${encodeURIComponent(row.code)}/close`);
      toast(t('mytables.closed', { name: tableTitle(row.name) }));
      highlight = false;
    } catch (failure) {
      toast(errorText(failure), 'error');
    }
    reload();
  }

  function draw() {
    el.hidden = rows.length === 0;
    el.classList.toggle('attention', highlight);
    const waiting = rows.filter((row) => row.status === 'waiting' && row.creator).length;
    el.replaceChildren();
    append(el, [
      h('h2', { id: 'my-tables-title', text: t('mytables.title') }),
      waiting >= limit ? h('p', { class: 'notice', id: 'my-tables-full', text: t('mytables.full', { count: limit }) }) : null,
      h(
        'ul',
        { class: 'my-table-list' },
        rows.map((row) => {
          const seated = row.seats.filter((seat) => seat.kind !== 'empty').length;
          const state = row.status === 'playing' ? t('status.playing') : t('waiting.title', { seated, seats: row.rules.seats });
          const closeButton =
            row.creator && row.status === 'waiting'
              ? h('button', { type: 'button', class: 'btn ghost', dataset: { close: row.code }, 'aria-label': `${t('mytables.close')}: ${tableTitle(row.name)}`, text: t('mytables.close') })
              : null;
          if (closeButton) closeButton.addEventListener('click', () => close(row, closeButton));
          return h(
            'li',
            { class: 'my-table', dataset: { code: row.code } },
            h('div', { class: 'my-table-main' }, h('span', { class: 'table-name', text: tableTitle(row.name) }), h('span', { class: ['status', `status-${row.status}`], text: state })),
            h(
              'div',
              { class: 'my-table-actions' },
              h('a', { class: 'btn primary', href: `/t/${encodeURIComponent(row.code)}`, 'aria-label': `${t('mytables.open')}: ${tableTitle(row.name)}`, text: t('mytables.open') }),
              closeButton,
            ),
          );
        }),
      ),
    ]);
  }

  draw();
  reload();
  // A table of mine filled, started or ended while the lobby is open: the list follows.
  const timer = setInterval(() => {
    if (document.visibilityState === 'visible' && rows.length) reload();
  }, 10000);
  return {
    el,
    reload,
    stop() {
      stopped = true;
      clearInterval(timer);
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

function playNowSection({ onTooMany }) {
  let prefs = loadQuickplay();
  let busy = false;
  const me = currentUser();
  const error = h('p', { class: 'form-error', role: 'alert', id: 'play-now-error' });
  const summary = h('p', { class: 'muted play-now-summary', id: 'play-now-summary', text: quickplaySummary(prefs) });

  async function go(path, body, button) {
    if (busy) return;
    askPermission(); // from this click: browsers ask only during a user gesture
    busy = true;
    button.disabled = true;
    button.classList.add('busy');
    error.textContent = '';
    const page = import('./table.js'); // fetched while the server seats the player
    const signedOut = !currentUser();
    try {
      // Signed out: the server makes a guest on the spot, named in the page's language.
      const answer = await post(path, signedOut ? { ...body, guest_name: suggestedGuestName(t('auth.guest_name_prefix')) } : body);
      if (answer.guest) signInChanged(); // the header shows the new guest
      if (path === '/api/quickplay' && answer.table.status === 'waiting') startSearch(answer.code);
      await page.catch(() => null);
      navigate(`/t/${encodeURIComponent(answer.code)}`);
    } catch (failure) {
      error.textContent = await refusalText(failure);
      if (failure.code === 'too_many_tables') {
        error.textContent = t('mytables.too_many');
        onTooMany();
      }
      busy = false;
      button.disabled = false;
      button.classList.remove('busy');
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
  const playNow = h('button', { type: 'button', class: 'btn primary big', id: 'play-now', 'aria-describedby': 'play-now-summary', text: t('playnow.button') });
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
  const playBot = h('button', { type: 'button', class: 'btn big secondary', id: 'play-bot', text: t('playnow.bot_button') });
  playBot.addEventListener('click', () => go('/api/quickplay/bot', { level }, playBot));

  return h(
    'section',
    { class: 'panel play-now', id: 'play-now-panel', 'aria-labelledby': 'lobby-title' },
    h('h1', { class: 'lobby-title', id: 'lobby-title', text: t('lobby.title') }),
    h('p', { class: 'lead', text: t('lobby.tagline') }),
    h(
      'div',
      { class: 'play-now-actions' },
      h('div', { class: 'play-now-main' }, playNow, summary),
      h('div', { class: 'play-bot' }, levelSelect, playBot),
    ),
    me && me.kind === 'guest' ? guestLine(me) : null,
    h('details', { class: 'play-prefs' }, h('summary', { text: t('playnow.preferences') }), form),
    error,
  );
}

/** A guest plays under the name quick play gave him: he may change it (the same guest, the same seats). */
function guestLine(me) {
  const error = h('p', { class: 'form-error', role: 'alert', id: 'guest-rename-error' });
  const input = h('input', {
    id: 'guest-rename',
    name: 'guest-rename',
    required: true,
    minlength: '2',
    maxlength: '24',
    pattern: '[A-Za-z0-9_\\-]+',
    autocomplete: 'nickname',
    value: me.name,
    'aria-describedby': 'guest-rename-error',
  });
  const form = h(
    'form',
    {
      class: 'guest-rename',
      id: 'guest-rename-form',
      hidden: true,
      onsubmit: async (event) => {
        event.preventDefault();
        error.textContent = '';
        try {
          await post('/api/auth/guest/name', { name: input.value.trim() });
          await signInChanged(); // the lobby and the header redraw with the new name
        } catch (failure) {
          const fields = failure.fieldErrors ? failure.fieldErrors() : {};
          error.textContent = fields.name ? t('auth.bad_name') : failure.status === 409 ? t('auth.name_taken') : errorText(failure);
        }
      },
    },
    h('label', { class: 'field-label', for: 'guest-rename', text: t('lobby.guest_new_name') }),
    h('div', { class: 'guest-rename-row' }, input, h('button', { type: 'submit', class: 'btn', text: t('lobby.guest_save_name') })),
  );
  const change = h('button', { type: 'button', class: 'btn ghost', id: 'guest-rename-open', 'aria-expanded': 'false', 'aria-controls': 'guest-rename-form', text: t('lobby.guest_change_name') });
  change.addEventListener('click', () => {
    form.hidden = !form.hidden;
    change.setAttribute('aria-expanded', form.hidden ? 'false' : 'true');
    if (!form.hidden) input.focus();
  });
  return h(
    'div',
    { class: 'guest-line', id: 'guest-line' },
    h('p', { class: 'muted' }, t('lobby.guest_playing_as'), ' ', h('strong', { text: me.name }), ' ', change, ' ', h('a', { href: '/#/login', text: t('lobby.guest_sign_up') })),
    form,
    error,
  );
}
