// Seasons as the pages name them: a calendar month by its name ("December 2026"), any other
// season by its dates; and the rating change of a match (results, profile).
import { h } from './dom.js';
import { formatSigned, language, t } from './i18n.js';

/** "December 2026" for a calendar month, else "1 Dec 2026 – 14 Dec 2026" (ends_at is exclusive). */
export function seasonName(season) {
  const start = new Date(season.starts_at);
  const end = new Date(season.ends_at);
  const monthly = start.getUTCDate() === 1 && end.getUTCDate() === 1 && start.getUTCHours() === 0 && end.getUTCHours() === 0
    && (end.getUTCFullYear() * 12 + end.getUTCMonth()) - (start.getUTCFullYear() * 12 + start.getUTCMonth()) === 1;
  if (monthly) return new Intl.DateTimeFormat(language(), { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(start);
  const last = new Date(end.getTime() - 1);
  const days = new Intl.DateTimeFormat(language(), { dateStyle: 'medium', timeZone: 'UTC' });
  return `${days.format(start)} \u2013 ${days.format(last)}`;
}

/** The season's last day, for "ends ..." (ends_at is the first moment after it). */
export function seasonEnd(season) {
  return new Intl.DateTimeFormat(language(), { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(new Date(season.ends_at).getTime() - 1));
}

/** A results row's rating line for a seat of a rated match, or null: "1536 (+36) · season +21". */
export function ratingChangeLine(results, seat) {
  const ratings = results && results.ratings;
  const change = ratings ? ratings[seat] ?? ratings[String(seat)] : null;
  if (!change) return null;
  const season = change.season_change === null || change.season_change === undefined ? null : t('results.season_change', { change: formatSigned(change.season_change) });
  return h(
    'span',
    { class: ['rating-change', change.change > 0 ? 'up' : change.change < 0 ? 'down' : 'even'], dataset: { change: String(change.change) } },
    t('results.rating_change', { rating: `${change.rating}${change.provisional ? '?' : ''}`, change: formatSigned(change.change) }),
    season ? h('span', { class: 'season-change', dataset: { change: String(change.season_change) }, text: ` · ${season}` }) : null,
  );
}
