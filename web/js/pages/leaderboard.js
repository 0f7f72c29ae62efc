// The leaderboards, a page at a time: all time (/#/leaderboard, the 100 best with at least 5 rated
// matches), this season (/#/leaderboard/season), the archive of past seasons (/#/seasons) and a past
// season's final standings (/#/seasons/<id>).
import { errorText, get } from '../api.js';
import { h } from '../dom.js';
import { formatNumber, t } from '../i18n.js';
import { pager } from '../pager.js';
import { seasonEnd, seasonName } from '../seasons.js';

const PAGE_SIZE = 25;

function tabs(active) {
  const tab = (href, name, text) =>
    h('a', { href, class: ['tab', active === name && 'active'], 'aria-current': active === name ? 'page' : null, dataset: { tab: name }, text });
  return h(
    'nav',
    { class: 'tabs board-tabs', 'aria-label': t('leaderboard.title') },
    tab('/#/leaderboard/season', 'season', t('leaderboard.tab_season')),
    tab('/#/leaderboard', 'all', t('leaderboard.tab_all')),
    tab('/#/seasons', 'past', t('leaderboard.tab_past')),
  );
}

/** params.board: 'all' (default), 'season', 'seasons' (the archive) or a season number. */
export function mount(root, params = {}) {
  const board = params.board || 'all';
  let page = 1;
  let data = null;
  let error = '';
  let token = 0;

  function url() {
    if (board === 'all') return `/api/leaderboard?page=${page}&page_size=${PAGE_SIZE}`;
    if (board === 'seasons') return `/api/seasons?page=${page}&page_size=${PAGE_SIZE}`;
    const season = board === 'season' ? 'current' : encodeURIComponent(board);
    return `/api/seasons/${season}/standings?page=${page}&page_size=${PAGE_SIZE}`;
  }

  async function load() {
    const ticket = ++token;
    try {
      const result = await get(url());
      if (ticket !== token) return;
      data = result;
      error = '';
    } catch (failure) {
      error = errorText(failure);
    }
    render();
  }

  function row(item) {
    return h(
      'tr',
      { class: 'leader-row', dataset: { name: item.name } },
      h('td', { 'data-label': t('leaderboard.rank'), class: 'rank', text: String(item.rank) }),
      h('td', { 'data-label': t('leaderboard.player') }, h('a', { href: `/#/u/${encodeURIComponent(item.name)}`, text: item.name })),
      h('td', { 'data-label': t('leaderboard.rating'), class: 'rating', text: String(item.rating) }),
      h('td', { 'data-label': t('leaderboard.matches'), text: String(item.matches) }),
    );
  }

  function boardTable(id) {
    return h(
      'table',
      { class: 'data-table leaderboard-table', id },
      h('caption', { class: 'visually-hidden', text: t('leaderboard.title') }),
      h('thead', {}, h('tr', {}, [t('leaderboard.rank'), t('leaderboard.player'), t('leaderboard.rating'), t('leaderboard.matches')].map((text) => h('th', { scope: 'col', text })))),
      h('tbody', {}, data.items.map(row)),
    );
  }

  function pages() {
    return pager(page, Math.max(1, Math.ceil(data.total / data.page_size)), (to) => { page = to; load(); });
  }

  function archive() {
    const past = data.items.filter((season) => !season.current);
    if (!past.length) return [h('p', { class: 'empty-state', text: t('season.archive_none') })];
    return [
      h(
        'ul',
        { class: 'season-list', id: 'season-archive' },
        past.map((season) =>
          h(
            'li',
            { dataset: { season: String(season.id) } },
            h('a', { href: `/#/seasons/${season.id}`, text: seasonName(season) }),
            ' ',
            h('span', { class: 'muted', text: season.archived ? t('season.players', { count: season.players }) : t('season.closing') }),
          ),
        ),
      ),
      pages(),
    ];
  }

  function heading() {
    if (board === 'all') return [h('p', { class: 'muted', text: t('leaderboard.explain') })];
    if (board === 'seasons') return [h('p', { class: 'muted', text: t('season.archive_explain') })];
    if (!data || !data.season) return [];
    const season = data.season;
    return [
      h('h2', { class: 'season-name', id: 'season-name', text: seasonName(season) }),
      h('p', { class: 'muted', id: 'season-when', text: season.current ? t('season.ends', { date: seasonEnd(season) }) : t('season.final', { count: formatNumber(data.total) }) }),
      season.current ? h('p', { class: 'muted', text: t('season.explain') }) : null,
    ];
  }

  function render() {
    if (gone) return; // another page took the screen: a late answer draws nothing
    const body = [];
    if (error) body.push(h('p', { class: 'form-error', role: 'alert', text: error }));
    else if (!data) body.push(h('p', { class: 'muted', text: t('common.loading') }));
    else if (board === 'seasons') body.push(...archive());
    else if (!data.items.length) body.push(h('p', { class: 'empty-state', text: board === 'all' ? t('leaderboard.none') : t('season.none') }));
    else body.push(boardTable(board === 'all' ? 'leaderboard' : 'season-board'), pages());
    const active = board === 'all' ? 'all' : board === 'season' ? 'season' : 'past';
    root.replaceChildren(
      h(
        'div',
        { class: 'page leaderboard-page' },
        h('h1', { text: t('leaderboard.title') }),
        tabs(active),
        h('section', { class: 'panel' }, heading(), body, board !== 'all' && board !== 'season' && board !== 'seasons' ? h('p', {}, h('a', { href: '/#/seasons', text: t('season.back') })) : null),
      ),
    );
  }

  let gone = false;
  render();
  load();
  return { relabel: render, unmount: () => { gone = true; } };
}
