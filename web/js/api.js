// REST calls to the server (same origin, session cookie).
import { t } from './i18n.js';

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === 'string' ? detail : `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
    // Table routes answer "code: message"; keep the code for a translated message.
    this.code = typeof detail === 'string' && /^[a-z_]+: /.test(detail) ? detail.split(':')[0] : null;
  }

  /** 422 bodies: {field: message} from FastAPI's detail[].loc. */
  fieldErrors() {
    const out = {};
    if (Array.isArray(this.detail)) {
      for (const item of this.detail) {
        const loc = Array.isArray(item.loc) ? item.loc : [];
        const field = loc.length > 1 ? loc[loc.length - 1] : loc[0] || '_';
        out[field] = out[field] ? `${out[field]}; ${item.msg}` : item.msg;
      }
    }
    return out;
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
  if (!response.ok) throw new ApiError(response.status, data ? data.detail : null);
  return data;
}

export const get = (path) => api('GET', path);
export const post = (path, body, headers) => api('POST', path, body ?? {}, headers);
export const del = (path) => api('DELETE', path);

/** A translated sentence for a failed request; the server's own words follow in parentheses. */
export function errorText(error) {
  if (!(error instanceof ApiError)) return t('error.generic');
  const known = error.code ? codeText(error.code) : null;
  if (known) return known;
  const detail = typeof error.detail === 'string' ? ` (${error.detail})` : '';
  switch (error.status) {
    case 0:
      return t('error.network');
    case 401:
      return t('error.unauthorized') + detail;
    case 403:
      return t('error.forbidden') + detail;
    case 404:
      return t('error.not_found') + detail;
    case 409:
      return t('error.conflict') + detail;
    case 429:
      return t('error.too_many') + detail;
    case 422:
      return t('error.invalid');
    case 503:
      return t('error.unavailable');
    default:
      return t('error.generic') + detail;
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
    case 'name_registered':
      return t('error.name_registered');
    default:
      return null;
  }
}
