// A player's profile (/#/u/<name>): rating and its history as an SVG chart, match counts by table
// type, recent matches linking to their replays, member since; on one's own, changing the password.
// Guests have none.
import { ApiError, errorText, get } from '../api.js';
import { h } from '../dom.js';
import { formatDate, formatNumber, formatSigned, t } from '../i18n.js';
import { integritySlot } from '../integrity.js';
import { passwordPanel } from '../password.js';
import { ratingText } from '../rating.js';
import { seasonName } from '../seasons.js';
import { currentUser } from '../session.js';
import { botLevelText } from '../table/describe.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children) el.append(child);
  return el;
}

/** The rating after each rated match as a line, the start (1500) as a dashed rule. */
export function ratingChart(points, { width = 480, height = 140, pad = 24 } = {}) {
  const values = [1500, ...points.map((point) => point.rating)];
  const low = Math.min(...values);
  const high = Math.max(...values);
  const span = Math.max(high - low, 20);
  const x = (i) => pad + (i * (width - 2 * pad)) / Math.max(values.length - 1, 1);
  const y = (value) => height - pad - ((value - low) * (height - 2 * pad)) / span;
  const line = values.map((value, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(value).toFixed(1)}`).join(' ');
  const chart = svg(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, class: 'rating-chart', id: 'rating-chart', role: 'img', 'aria-label': t('profile.chart_label', { count: points.length }) },
    svg('line', { x1: pad, x2: width - pad, y1: y(1500), y2: y(1500), stroke: 'currentColor', 'stroke-opacity': 0.3, 'stroke-dasharray': '4 4' }),
    svg('path', { d: line, fill: 'none', stroke: 'currentColor', 'stroke-width': 2 }),
    svg('text', { x: 2, y: y(high) + 4, 'font-size': 10, fill: 'currentColor' }, String(high)),
    svg('text', { x: 2, y: y(low) + 4, 'font-size': 10, fill: 'currentColor' }, String(low)),
  );
  values.forEach((value, i) => chart.append(svg('circle', { cx: x(i), cy: y(value), r: 2.5, fill: 'currentColor', 'data-rating': value })));
  return chart;
}

// The profile's recent matches name each seat with the server's display name; a bot's is "Bot (easy)"
// (app/tables/spec.py), which no account name can be (names have no spaces or brackets).
const BOT_NAME = /^Bot \((easy|normal|hard)\)$/;

/** The players of a recent match, a bot named as one in this language ("Easy bot"). */
export function playerNames(names) {
  return names.map((name, i) => {
    const bot = BOT_NAME.exec(name);
    const label = bot ? h('span', { class: 'bot-name', dataset: { bot: bot[1] }, text: botLevelText(bot[1]) }) : name;
    return [i ? ', ' : null, label];
  });
}

/** This season's rating and place (profile head), or a note that there is none yet. */
function seasonLine(season) {
  if (!season) return h('p', { class: 'profile-rating season-rating muted', id: 'season-rating', text: `${t('profile.this_season')}: ${t('profile.no_season')}` });
  return h(
    'p',
    { class: 'profile-rating season-rating', id: 'season-rating', dataset: { rank: season.rank === null ? '' : String(season.rank) } },
    h('span', { class: 'muted', text: `${t('profile.this_season')}: ` }),
    h('strong', { text: ratingText(season) }),
    ' ',
    season.rank !== null
      ? h('a', { class: 'season-rank', href: '/#/leaderboard/season', text: t('profile.season_rank', { rank: season.rank }) })
      : h('span', { class: 'muted', text: t('profile.season_provisional', { count: season.matches }) }),
  );
}

/** Final places in past seasons, each linking to that season's standings. */
function pastSeasons(rows) {
  if (!rows.length) return null;
  return h(
    'section',
    { class: 'panel' },
    h('h2', { text: t('profile.past_seasons') }),
    h(
      'ul',
      { class: 'season-list', id: 'past-seasons' },
      rows.map((row) =>
        h(
          'li',
          { dataset: { season: String(row.season_id), rank: String(row.rank) } },
          h('a', { href: `/#/seasons/${row.season_id}`, text: seasonName(row) }),
          ' ',
          h('strong', { text: t('profile.past_place', { rank: row.rank, players: row.players }) }),
          h('span', { class: 'muted', text: ` · ${row.rating}` }),
        ),
      ),
    ),
  );
}

export function mount(root, params) {
  const name = params.name || '';
  let data = null;
  let error = '';
  let cups = [];

  async function load() {
    get(`/api/tournaments/player/${encodeURIComponent(name)}`)
      .then((rows) => {
        cups = rows;
        render();
      })
      .catch(() => {});
    try {
      data = await get(`/api/players/${encodeURIComponent(name)}`);
    } catch (failure) {
      error = failure instanceof ApiError && failure.status === 404 ? t('profile.not_found') : errorText(failure);
    }
    render();
  }

  function result(match) {
    if (match.draw) return t('history.draw');
    if (match.durak) return t('history.durak');
    if (match.place === 1) return t('history.won');
    return t('history.safe');
  }

  function render() {
    if (gone) return; // another page took the screen: a late answer draws nothing
    const body = [];
    if (error) body.push(h('p', { class: 'form-error', role: 'alert', text: error }));
    else if (!data) body.push(h('p', { class: 'muted', text: t('common.loading') }));
    else {
      body.push(
        h(
          'section',
          { class: 'panel profile-head' },
          seasonLine(data.season),
          h('p', { class: 'profile-rating' }, h('span', { class: 'muted', text: `${t('profile.all_time')}: ` }), h('strong', { id: 'profile-rating', text: ratingText(data.rating) })),
          data.rating.provisional ? h('p', { class: 'muted', text: t('profile.provisional', { count: data.rating.matches }) }) : null,
          h('p', { class: 'muted', id: 'member-since', text: t('profile.member_since', { date: formatDate(data.member_since) }) }),
          h('p', { id: 'matches-played', text: t('profile.matches_played', { count: data.matches_played }) }),
          data.rating_history.length ? ratingChart(data.rating_history) : h('p', { class: 'muted', text: t('profile.no_rated') }),
        ),
        pastSeasons(data.past_seasons || []),
        cups.length
          ? h(
              'section',
              { class: 'panel' },
              h('h2', { text: t('profile.tournaments') }),
              h(
                'ul',
                { class: 'profile-tournaments', id: 'profile-tournaments' },
                cups.map((cup) => h('li', {}, h('a', { href: `/#/tournaments/${cup.id}`, text: cup.place ? t('profile.tournament_place', { place: cup.place, name: cup.name, points: cup.points }) : cup.name }), cup.prize ? ` · +${formatNumber(cup.prize)}` : '')),
              ),
            )
          : null,
        h(
          'section',
          { class: 'panel' },
          h('h2', { text: t('profile.by_type') }),
          !Object.keys(data.by_table_type).length ? h('p', { class: 'muted', text: t('history.none') }) : h(
            'table',
            { class: 'data-table', id: 'profile-stats' },
            h('thead', {}, h('tr', {}, [t('profile.table_type'), t('profile.played'), t('profile.wins'), t('profile.durak'), t('profile.draws')].map((text) => h('th', { scope: 'col', text })))),
            h(
              'tbody',
              {},
              Object.entries(data.by_table_type).map(([kind, counts]) =>
                h('tr', { dataset: { type: kind } }, h('td', { text: kind }), h('td', { text: String(counts.played) }), h('td', { text: String(counts.wins) }), h('td', { text: String(counts.durak) }), h('td', { text: String(counts.draws) })),
              ),
            ),
          ),
        ),
        h(
          'section',
          { class: 'panel' },
          h('h2', { text: t('profile.recent') }),
          data.recent_matches.length
            ? h(
                'ul',
                { class: 'recent-matches', id: 'recent-matches' },
                data.recent_matches.map((match) =>
                  h(
                    'li',
                    { dataset: { match: match.match_id } },
                    h('time', { datetime: match.finished_at, text: formatDate(match.finished_at) }),
                    ' · ',
                    h('span', { class: 'players' }, playerNames(match.players), ` — ${result(match)}`),
                    match.rating_change !== null ? h('span', { class: 'rating-change', text: ` (${formatSigned(match.rating_change)})` }) : null,
                    ' ',
                    h('a', { class: 'btn small', href: `/#/replay/${encodeURIComponent(match.match_id)}`, text: t('history.replay') }),
                  ),
                ),
              )
            : h('p', { class: 'muted', text: t('history.none') }),
        ),
      );
    }
    const me = currentUser();
    const mine = Boolean(me && me.kind === 'account' && me.name === (data ? data.name : name));
    root.replaceChildren(
      h('div', { class: 'page profile' }, h('h1', { id: 'profile-name', text: data ? data.name : name }), mine ? integritySlot() : null, body, mine && data ? (password = password || passwordPanel()) : null),
    );
  }

  let gone = false;
  let password = null; // the change-password form, built once: a late answer keeps what was typed
  render();
  load();
  return {
    relabel: () => {
      password = null;
      render();
    },
    unmount: () => {
      gone = true;
    },
  };
}
