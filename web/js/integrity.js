// The player's side of the fair-play rules (docs/integrity.md): GET /api/me/integrity says whether an
// admin froze his staked play (and why) and which warnings he was given. The lobby and his own
// profile show a banner for each; a warning goes away for good once dismissed (remembered in this
// browser, per account). Refusals at staked tables (related_accounts, pair_cap, staked_play_frozen, new_account)
// are put in words here, the frozen one with the admin's reason.
import { ApiError, errorText, get } from './api.js';
import { h } from './dom.js';
import { formatDate, formatDay, t } from './i18n.js';
import { currentUser } from './session.js';

const SEEN_KEY = 'durak.integrity.seen'; // {accountId: [warning id, ...]}
const FRESH_MS = 30000;

// The refusals a staked table answers with because of the fair-play rules.
export const INTEGRITY_CODES = ['related_accounts', 'pair_cap', 'staked_play_frozen', 'new_account'];

let cache = { account: null, at: 0, data: null };

/** The signed-in account's {frozen, warnings}; an empty answer for guests and on any failure. */
export async function myIntegrity({ fresh = false } = {}) {
  const me = currentUser();
  const empty = { frozen: null, warnings: [] };
  if (!me || me.kind !== 'account') return empty;
  if (!fresh && cache.account === me.id && cache.data && Date.now() - cache.at < FRESH_MS) return cache.data;
  try {
    const data = await get('/api/me/integrity');
    cache = { account: me.id, at: Date.now(), data: { frozen: data.frozen || null, warnings: data.warnings || [] } };
    return cache.data;
  } catch {
    return empty; // the banners are a courtesy: a failed look-up must not break the page
  }
}

function readSeen() {
  try {
    const all = JSON.parse(localStorage.getItem(SEEN_KEY));
    return all && typeof all === 'object' ? all : {};
  } catch {
    return {};
  }
}

function seenWarnings(accountId) {
  const ids = readSeen()[accountId];
  return new Set(Array.isArray(ids) ? ids : []);
}

function markSeen(accountId, warningId) {
  const all = readSeen();
  const ids = new Set(Array.isArray(all[accountId]) ? all[accountId] : []);
  ids.add(warningId);
  all[accountId] = [...ids].slice(-200);
  try {
    localStorage.setItem(SEEN_KEY, JSON.stringify(all));
  } catch {
    // private mode: dismissed for this page only
  }
}

/** A warning in the player's language, from its kind and facts; any other kind, or none (warnings
 * older than the kinds), in the server's English text. */
export function warningText(warning) {
  const params = warning.params;
  if (!params) return warning.text;
  if (warning.kind === 'quick_wins') {
    return t('integrity.warning_quick_wins', { ...params, day: formatDay(params.day) });
  }
  if (warning.kind === 'admin_warned') {
    const text = t('integrity.warning_admin_warned', params);
    return params.note ? `${text} ${t('integrity.warning_admin_note', { note: params.note })}` : text;
  }
  return warning.text;
}

/** The banners for `data` (from myIntegrity): the freeze with its reason, then each warning not
 * dismissed yet in this browser, with its own "Understood" button. */
export function integrityBanners(data) {
  const me = currentUser();
  if (!data || !me) return null;
  const out = [];
  if (data.frozen) {
    out.push(
      h(
        'section',
        { class: 'integrity-banner frozen', id: 'frozen-banner', role: 'status' },
        h('h2', { text: t('integrity.frozen_title') }),
        h('p', { class: 'frozen-reason' }, h('span', { class: 'muted', text: `${t('integrity.reason')}: ` }), h('strong', { text: data.frozen.reason })),
        h('p', { class: 'muted', text: t('integrity.frozen_since', { date: formatDate(data.frozen.since) }) }),
        h('p', { text: t('integrity.frozen_free_tables') }),
      ),
    );
  }
  const seen = seenWarnings(me.id);
  for (const warning of data.warnings || []) {
    if (seen.has(warning.id)) continue;
    const banner = h(
      'section',
      { class: 'integrity-banner warning', role: 'status', dataset: { warning: String(warning.id) } },
      h('h2', { text: t('integrity.warning_title') }),
      h('p', { class: 'warning-text', text: warningText(warning) }),
      h('p', { class: 'muted', text: formatDate(warning.at) }),
    );
    banner.append(
      h('button', {
        type: 'button',
        class: 'btn small',
        dataset: { action: 'dismiss-warning' },
        onclick: () => {
          markSeen(me.id, warning.id);
          banner.remove();
        },
        text: t('integrity.understood'),
      }),
    );
    out.push(banner);
  }
  return out.length ? h('div', { class: 'integrity-banners', id: 'integrity-banners' }, out) : null;
}

/** A place on a page for the banners: what is known at once (no flicker when a page redraws), then
 * what GET /api/me/integrity answers. */
export function integritySlot() {
  const slot = h('div', { class: 'integrity-slot' });
  const fill = (data) => {
    const banners = integrityBanners(data);
    slot.replaceChildren(...(banners ? [banners] : []));
  };
  const me = currentUser();
  if (me && cache.account === me.id && cache.data) fill(cache.data);
  myIntegrity().then(fill);
  return slot;
}

/** A failed sit-down, quick play or rematch in words; a frozen player is told the admin's reason. */
export async function refusalText(failure) {
  const text = errorText(failure);
  if (!(failure instanceof ApiError) || failure.code !== 'staked_play_frozen') return text;
  const { frozen } = await myIntegrity({ fresh: true });
  return frozen ? `${text} ${t('integrity.reason')}: ${frozen.reason}` : text;
}
