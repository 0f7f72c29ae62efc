// REST calls to the server (same origin, session cookie).
import { newClientSeed } from './fairness.js';
import { t } from './i18n.js';

// Server answers that carry no error code of their own, by the start of their English detail.
const DETAIL_CODES = [
  ['not signed in', 'not_signed_in'],
  ['account=me needs a signed-in session', 'not_signed_in'],
  ['guests cannot do this', 'guests_cannot'],
  ['guests can open only free tables', 'guests_free_tables_only'],
  ['guests have no match history', 'guests_no_history'],
  ['admins only', 'admins_only'],
  ['no table with that code', 'no_table'],
  ['a spectator link can only watch', 'spectator_link'],
  ['the table did not answer in time', 'timeout'],
  ['no account', 'no_account'],
  ['no match', 'no_such_match'],
  ['the rules engine is not available', 'unavailable'],
  ['request body too large', 'body_too_large'],
  ['too many wrong passwords', 'login_throttled'],
  ['unknown name or wrong password', 'wrong_password'],
  ['insufficient funds', 'insufficient_funds'],
];

/** The error's stable code: the body's `code`, a "code: message" detail, or a known detail. */
function errorCode(body) {
  if (!body) return null;
  if (typeof body.code === 'string') return body.code;
  const detail = body.detail;
  if (typeof detail !== 'string') return null;
  const prefixed = detail.match(/^([a-z_]+): /);
  if (prefixed) return prefixed[1];
  const known = DETAIL_CODES.find(([start]) => detail.startsWith(start));
  return known ? known[1] : null;
}

export class ApiError extends Error {
  constructor(status, body) {
    const detail = body ? body.detail : null;
    super(typeof detail === 'string' ? detail : `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
    this.code = errorCode(body);
  }

  /** 422 bodies: {field: translated message} from FastAPI's detail[] (loc, type, ctx). */
  fieldErrors() {
    const out = {};
    if (Array.isArray(this.detail)) {
      for (const item of this.detail) {
        const loc = Array.isArray(item.loc) ? item.loc : [];
        const field = loc.length > 1 ? loc[loc.length - 1] : loc[0] || '_';
        const message = validationText(item);
        out[field] = out[field] ? `${out[field]}; ${message}` : message;
      }
    }
    return out;
  }
}

/** One validation error (pydantic's `type` and `ctx`) in words; the server's English otherwise. */
export function validationText(item) {
  const ctx = item.ctx || {};
  switch (item.type) {
    case 'missing':
      return t('validation.missing');
    case 'string_too_short':
      return t('validation.too_short', { min: ctx.min_length });
    case 'string_too_long':
      return t('validation.too_long', { max: ctx.max_length });
    case 'string_pattern_mismatch':
      return t('validation.pattern');
    case 'greater_than_equal':
      return t('validation.at_least', { limit: ctx.ge });
    case 'greater_than':
      return t('validation.more_than', { limit: ctx.gt });
    case 'less_than_equal':
      return t('validation.at_most', { limit: ctx.le });
    case 'less_than':
      return t('validation.less_than', { limit: ctx.lt });
    case 'int_parsing':
    case 'int_type':
    case 'int_from_float':
      return t('validation.whole_number');
    case 'literal_error':
    case 'enum':
      return t('validation.choice');
    default:
      return String(item.msg || '').replace(/^Value error, /, '') || t('error.invalid');
  }
}

function fieldLabel(field) {
  switch (field) {
    case 'name':
      return t('field.name');
    case 'password':
      return t('field.password');
    case 'amount':
      return t('field.amount');
    case 'reason':
      return t('field.reason');
    case 'seat':
      return t('field.seat');
    case 'stake':
      return t('field.stake');
    case 'note':
      return t('field.note');
    default:
      return field;
  }
}

export async function api(method, path, body, headers = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, null);
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const get = (path) => api('GET', path);
// Quick play may seat the player at a table waiting for him, whose commitment is already drawn: the
// tap carries this browser's own seed for that deal (docs/fairness.md, "Who contributed to a deal").
const withSeed = (path, body) => (path === '/api/quickplay' ? { ...(body ?? {}), client_seed: newClientSeed() } : body ?? {});
export const post = (path, body, headers) => api('POST', path, withSeed(path, body), headers);
export const del = (path) => api('DELETE', path);

/** A translated sentence for a failed request: from its code, its validation errors or its
 * status; the server's English words only when none of those is known. */
export function errorText(error) {
  if (!(error instanceof ApiError)) return t('error.generic');
  const known = error.code ? codeText(error.code) : null;
  if (known) return known;
  if (error.status === 422 && Array.isArray(error.detail) && error.detail.length) {
    return error.detail
      .map((item) => {
        const loc = Array.isArray(item.loc) ? item.loc : [];
        const field = loc.length > 1 ? loc[loc.length - 1] : null;
        return field ? t('validation.field', { field: fieldLabel(field), message: validationText(item) }) : validationText(item);
      })
      .join(' ');
  }
  switch (error.status) {
    case 0:
      return t('error.network');
    case 401:
      return t('error.unauthorized');
    case 403:
      return t('error.forbidden');
    case 404:
      return t('error.not_found');
    case 409:
      return t('error.conflict');
    case 413:
      return t('code.body_too_large');
    case 422:
      return t('error.invalid');
    case 429:
      return t('error.too_many');
    case 503:
      return t('error.unavailable');
    default:
      return typeof error.detail === 'string' ? `${t('error.generic')} (${error.detail})` : t('error.generic');
  }
}

/** Stable error codes (websocket errors and table REST errors) in words. */
export function codeText(code) {
  switch (code) {
    case 'not_seated':
      return t('code.not_seated');
    case 'not_your_turn':
      return t('code.not_your_turn');
    case 'card_not_in_hand':
      return t('code.card_not_in_hand');
    case 'does_not_beat':
      return t('code.does_not_beat');
    case 'rank_not_on_table':
      return t('code.rank_not_on_table');
    case 'limit_exceeded':
      return t('code.limit_exceeded');
    case 'transfer_not_allowed':
      return t('code.transfer_not_allowed');
    case 'bad_play':
    case 'bad_message':
    case 'bad_json':
    case 'unknown_type':
      return t('code.bad_play');
    case 'not_allowed_here':
      return t('code.not_allowed_here');
    case 'illegal_action':
      return t('code.illegal_action');
    case 'match_over':
    case 'match_not_running':
      return t('code.match_not_running');
    case 'stale_version':
      return t('code.stale_version');
    case 'rate_limited':
      return t('code.rate_limited');
    case 'timeout':
    case 'unavailable':
      return t('error.unavailable');
    case 'already_seated':
      return t('code.already_seated');
    case 'match_running':
      return t('code.match_running');
    case 'guests_free_tables_only':
      return t('code.guests_free_tables_only');
    case 'seat_taken':
      return t('code.seat_taken');
    case 'table_full':
      return t('code.table_full');
    case 'not_creator':
      return t('code.not_creator');
    case 'bots_free_tables_only':
      return t('code.bots_free_tables_only');
    case 'not_enough_players':
      return t('code.not_enough_players');
    case 'insufficient_funds':
      return t('code.insufficient_funds');
    case 'no_match':
      return t('code.no_match');
    case 'cross_site_request':
      return t('code.cross_site_request');
    case 'unsupported_media_type':
      return t('code.unsupported_media_type');
    case 'not_signed_in':
      return t('error.unauthorized');
    case 'guests_cannot':
      return t('code.guests_cannot');
    case 'guests_no_history':
      return t('code.guests_no_history');
    case 'admins_only':
      return t('code.admins_only');
    case 'no_table':
      return t('code.no_table');
    case 'spectator_link':
      return t('code.spectator_link');
    case 'no_account':
      return t('code.no_account');
    case 'no_such_match':
      return t('code.no_such_match');
    case 'body_too_large':
      return t('code.body_too_large');
    case 'login_throttled':
      return t('code.login_throttled');
    case 'wrong_password':
      return t('auth.wrong_password');
    case 'name_registered':
      return t('error.name_registered');
    case 'table_closed':
      return t('code.table_closed');
    case 'too_many_tables':
      return t('code.too_many_tables');
    case 'too_many_bot_tables':
      return t('code.too_many_bot_tables');
    case 'too_many_streams':
      return t('code.too_many_streams');
    case 'related_accounts':
      return t('code.related_accounts');
    case 'pair_cap':
      return t('code.pair_cap');
    case 'staked_play_frozen':
      return t('code.staked_play_frozen');
    case 'new_account':
      return t('code.new_account');
    case 'no_ready_check':
      return t('code.no_ready_check');
    case 'not_connected':
      return t('code.not_connected');
    case 'already_reversed':
      return t('code.already_reversed');
    case 'nothing_to_reverse':
      return t('code.nothing_to_reverse');
    case 'already_reported':
      return t('code.already_reported');
    case 'admin_account':
      return t('admin.reset_admin');
    case 'coach_players_only':
      return t('code.coach_players_only');
    case 'coach_busy':
      return t('code.coach_busy');
    case 'coach_quota':
      return t('code.coach_quota');
    case 'coach_full':
      return t('code.coach_full');
    default:
      return null;
  }
}
