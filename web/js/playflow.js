// Small shared facts of getting to a game: the "Play now" search this tab started (so the table page
// shows the searching state), and why the viewer cannot take a seat at a staked table.
import { formatNumber, t } from './i18n.js';
import { currentUser } from './session.js';

const SEARCH_KEY = 'durak.search';

/** "Play now" seated us at a table that waits for players: the table page searches from now on. */
export function startSearch(code) {
  try {
    sessionStorage.setItem(SEARCH_KEY, JSON.stringify({ code, since: Date.now() }));
  } catch {
    // private mode: the table page shows the plain waiting panel
  }
}

/** The search this tab runs at table `code` ({code, since}), or null. */
export function searchAt(code) {
  try {
    const search = JSON.parse(sessionStorage.getItem(SEARCH_KEY));
    return search && search.code === code && Number.isFinite(search.since) ? search : null;
  } catch {
    return null;
  }
}

export function endSearch() {
  try {
    sessionStorage.removeItem(SEARCH_KEY);
  } catch {
    // nothing kept
  }
}

/** Why the viewer cannot take a seat at a table with this stake, or null when he can. */
export function joinRefusal(stake) {
  if (!stake) return null;
  const me = currentUser();
  if (!me || me.kind !== 'account') return t('lobby.join_needs_account');
  const balance = me.balance ?? 0;
  if (balance < stake) return t('lobby.join_needs_coins', { stake: formatNumber(stake), balance: formatNumber(balance) });
  return null;
}

/** Seconds as "0:07", "1:23". */
export function elapsedText(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}
