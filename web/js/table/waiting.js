// Before a match: the table's rules, the seats (sit here, add or remove a bot), joining as a guest,
// the links to share. After "Play now" (web/js/playflow.js) the same panel is the search: the time
// waited, Cancel, and after a while (GET /api/quickplay/settings) an offer to fill the empty seats with
// bots; a person who comes first still takes his seat. The deal's commitment and the client seed
// (provably fair deals) fold away under "Fair deal".
import { del, errorText, get, post } from '../api.js';
import { linkField, watchUrlFor } from '../copy.js';
import { h } from '../dom.js';
import { formatNumber, t } from '../i18n.js';
import { navigate } from '../main.js';
import { elapsedText, endSearch, joinRefusal, searchAt } from '../playflow.js';
import { rulesChips } from '../rules.js';
import { currentUser } from '../session.js';
import { toast } from '../toast.js';
import { botLevelText, displayName, tableTitle } from './describe.js';
import { guestBadge } from './render.js';

const BOT_LEVEL_KEY = 'durak.quickplay.bot'; // the lobby's "Play a bot" level

export function waitingPanel(game) {
  const st = game.st;
  const table = st.table;
  const search = searchAt(st.code);
  if (search && !st.watch && st.seat !== null && table.status === 'waiting' && !table.match_id) return searchPanel(game, search);
  return seatsPanel(game);
}

/** After the table changed (not while drawing): a search that found its match ends. */
export function waitingEffects(game) {
  const table = game.st.table;
  if (table && searchAt(game.st.code) && (table.status !== 'waiting' || table.match_id)) endSearch();
}

function seatList(game, { canSit, me, creator }) {
  const st = game.st;
  const table = st.table;
  const stake = table.rules.stake;
  return h(
    'ul',
    { class: 'seat-list' },
    table.seats.map((seat) =>
      h(
        'li',
        { class: ['seat-line', seat.kind], dataset: { seat: String(seat.seat) } },
        h('span', { class: 'seat-no', text: t('table.seat_n', { n: seat.seat + 1 }) }),
        seat.kind === 'human' ? h('span', { class: ['conn', seat.connected ? 'online' : 'offline'], role: 'img', 'aria-label': seat.connected ? t('table.online') : t('table.offline'), title: seat.connected ? t('table.online') : t('table.offline') }) : null,
        h('span', { class: 'seat-who', text: seat.kind === 'empty' ? t('table.free_seat') : displayName(seat) }),
        guestBadge(seat),
        seat.kind === 'empty' && canSit && me && !joinRefusal(stake)
          ? h('button', { type: 'button', class: 'btn small primary', dataset: { key: `sit:${seat.seat}`, action: 'sit' }, onclick: () => game.join(seat.seat), text: t('waiting.sit_here') })
          : null,
        seat.kind === 'empty' && creator && stake === 0 && table.status !== 'playing'
          ? h(
              'span',
              { class: 'bot-add' },
              ['easy', 'normal', 'hard'].map((level) =>
                h('button', { type: 'button', class: 'btn small ghost', dataset: { key: `bot:${seat.seat}:${level}`, bot: level }, onclick: () => game.tableCall('bots', { seat: seat.seat, level }), text: t('waiting.add_bot', { level: botLevelText(level) }) }),
              ),
            )
          : null,
        seat.kind === 'bot' && creator && table.status !== 'playing'
          ? h('button', { type: 'button', class: 'btn small ghost', onclick: () => del(`/api/tables/${encodeURIComponent(st.code)}/bots/${seat.seat}`).catch((failure) => toast(errorText(failure), 'error')), text: t('waiting.remove_bot') })
          : null,
      ),
    ),
  );
}

/** The provably fair deal's facts (docs/fairness.md), folded: they are not what a player needs to start. */
function fairDetails(game) {
  const line = game.fairnessLine();
  if (!line) return null;
  // Open or not, it stays so while the table redraws (remembered when the player toggles it).
  const details = h('details', { class: 'fair-details', id: 'fair-details', open: Boolean(game.st.fairDetailsOpen) }, h('summary', { text: t('waiting.fair_deal') }), line);
  details.addEventListener('toggle', () => game.set({ fairDetailsOpen: details.open }));
  return details;
}

function seatsPanel(game) {
  const st = game.st;
  const { code, watch } = st;
  const table = st.table;
  const me = currentUser();
  const seated = table.seats.filter((seat) => seat.kind !== 'empty').length;
  const creator = game.isCreator();
  const stake = table.rules.stake;
  const canSit = !watch && st.seat === null && table.status !== 'playing' && table.seats.some((seat) => seat.kind === 'empty');
  const children = [h('h2', { text: t('waiting.title', { seated, seats: table.seats.length }) })];
  // What the table plays, before anyone takes a seat (an invite link opens here).
  children.push(h('div', { class: 'waiting-rules', id: 'waiting-rules' }, rulesChips(table.rules, { compact: true }), table.rules.cheating ? h('p', { class: 'notice cheating-note', text: t('waiting.cheating_note') }) : null));
  if (!watch && st.seat === null && canSit) {
    const refusal = joinRefusal(stake);
    if (!me) {
      children.push(
        h(
          'form',
          { class: 'form guest-join', id: 'guest-join', onsubmit: game.joinAsGuest },
          h(
            'label',
            { class: 'field' },
            h('span', { class: 'field-label', text: t('waiting.guest_name') }),
            h('input', { name: 'guest-name', required: true, minlength: '2', maxlength: '24', pattern: '[A-Za-z0-9_\\-]+', autocomplete: 'nickname', value: st.guestName }),
          ),
          stake > 0 ? h('p', { class: 'notice', text: t('waiting.staked_needs_account') }) : null,
          h('button', { type: 'submit', class: 'btn primary big', id: 'guest-join-button', disabled: stake > 0, text: t('waiting.join_as_guest') }),
          h('p', { class: 'hint' }, h('a', { href: `/#/login?next=${encodeURIComponent(location.pathname)}`, text: t('waiting.or_sign_in') })),
        ),
      );
    } else if (stake > 0 && me.kind === 'guest') {
      children.push(h('p', { class: 'notice', text: t('waiting.staked_needs_account') }));
    } else if (refusal) {
      // Not enough coins: the button says why instead of leading to a refusal.
      children.push(
        h('button', { type: 'button', class: 'btn primary big', id: 'join-button', disabled: true, 'aria-describedby': 'join-refusal', text: t('waiting.join_staked', { coins: formatNumber(stake) }) }),
        h('p', { class: 'join-refusal', id: 'join-refusal', text: refusal }),
      );
    } else {
      children.push(h('button', { type: 'button', class: 'btn primary big', id: 'join-button', dataset: { key: 'join' }, onclick: () => game.join(undefined), text: stake > 0 ? t('waiting.join_staked', { coins: formatNumber(stake) }) : t('waiting.join') }));
    }
  }
  if (st.joinError) children.push(h('p', { class: 'form-error', role: 'alert', id: 'join-error', text: st.joinError }));
  // Who sits where after Join: a newcomer's first screen is the rules and the button.
  children.push(seatList(game, { canSit, me, creator }));
  // A refused rematch leaves the table waiting with everyone seated: why it did not start.
  if (st.rematchError && st.rematchError !== st.joinError) children.push(h('p', { class: 'form-error', role: 'alert', id: 'rematch-error', text: st.rematchError }));
  if (creator && seated >= 2 && seated < table.seats.length) {
    children.push(h('button', { type: 'button', class: 'btn secondary', id: 'start-button', onclick: () => game.tableCall('start', {}), text: t('waiting.start_now', { count: seated }) }));
  }
  if (!watch) {
    const share = { title: tableTitle(table.name), text: t('share.invite_text', { name: tableTitle(table.name) }) };
    const links = [linkField(t('create.invite_link'), `${location.origin}/t/${code}`, 'invite-link', { share })];
    const watchUrl = watchUrlFor(code);
    if (watchUrl) links.push(linkField(t('create.watch_link'), watchUrl, 'watch-link'));
    children.push(h('div', { class: 'share' }, links));
  }
  if (st.seat !== null) children.push(h('button', { type: 'button', class: 'btn ghost', id: 'leave-button', onclick: game.leave, text: t('table.leave') }));
  children.push(fairDetails(game));
  return h('section', { class: 'panel waiting', id: 'waiting' }, children);
}

// ---------------------------------------------------------------------- the search ("Play now")

let offerAfter = null; // Promise of the seconds before bots are offered (GET /api/quickplay/settings)
let offerAfterS = null; // ... once known
let ticker = null;

function botOfferDelay() {
  if (!offerAfter) {
    offerAfter = get('/api/quickplay/settings')
      .then((settings) => {
        offerAfterS = Number(settings.bot_offer_after_s);
        return offerAfterS;
      })
      .catch(() => {
        offerAfter = null; // asked again by the next panel
        return 20;
      });
  }
  return offerAfter;
}

/** Once a second while a search shows: the time waited, and the bot offer once its time has come. */
function tickSearch() {
  const elapsed = document.getElementById('search-elapsed');
  if (!elapsed) {
    clearInterval(ticker);
    ticker = null;
    return;
  }
  const waited = Date.now() - Number(elapsed.dataset.since);
  const text = elapsedText(waited);
  if (elapsed.textContent !== text) elapsed.textContent = text;
  const offer = document.getElementById('search-bots');
  const after = Number(offer && offer.dataset.after);
  if (offer && offer.hidden && Number.isFinite(after) && offer.dataset.after !== '' && waited >= after * 1000) offer.hidden = false;
}

function searchPanel(game, search) {
  const st = game.st;
  const table = st.table;
  const others = table.seats.filter((seat) => seat.kind === 'human' && seat.player !== st.you).length;
  const seated = table.seats.filter((seat) => seat.kind !== 'empty').length;
  // Bots only at a free table, by its creator or by a player alone there (the server checks the same).
  const mayFill = table.rules.stake === 0 && (game.isCreator() || others === 0);
  const elapsed = h('span', { class: 'search-elapsed', id: 'search-elapsed', role: 'timer', 'aria-label': t('search.waited'), dataset: { since: String(search.since) }, text: elapsedText(Date.now() - search.since) });
  const known = mayFill && offerAfterS !== null;
  const offer = h(
    'div',
    { class: 'search-bots', id: 'search-bots', hidden: !known || Date.now() - search.since < offerAfterS * 1000, dataset: { after: known ? String(offerAfterS) : '' } },
    h('p', { text: t('search.bots_offer') }),
    h('button', { type: 'button', class: 'btn primary big', id: 'search-fill', dataset: { key: 'search-fill' }, onclick: (event) => fillWithBots(game, event.currentTarget), text: t('search.bots_button') }),
  );
  if (mayFill && !known) {
    botOfferDelay().then((seconds) => {
      offer.dataset.after = String(seconds);
      tickSearch();
    });
  }
  if (!ticker) ticker = setInterval(tickSearch, 1000);
  return h(
    'section',
    { class: 'panel waiting searching', id: 'waiting', 'aria-labelledby': 'search-title' },
    h('div', { class: 'search-head' }, h('span', { class: 'search-pulse', 'aria-hidden': 'true' }), h('h2', { id: 'search-title', text: t('search.title') }), elapsed),
    h('p', { class: 'search-count', id: 'search-count', text: t('search.seated', { seated, seats: table.seats.length }) }),
    rulesChips(table.rules),
    offer,
    st.joinError ? h('p', { class: 'form-error', role: 'alert', id: 'join-error', text: st.joinError }) : null,
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn ghost', id: 'search-cancel', dataset: { key: 'search-cancel' }, onclick: (event) => cancelSearch(game, event.currentTarget), text: t('search.cancel') })),
    fairDetails(game),
  );
}

async function fillWithBots(game, button) {
  button.disabled = true;
  let level = 'normal';
  try {
    level = localStorage.getItem(BOT_LEVEL_KEY) || 'normal';
  } catch {
    // the default level
  }
  try {
    await post(`/api/quickplay/${encodeURIComponent(game.st.code)}/bots`, { level });
    endSearch(); // the match starts: the next update shows the felt
  } catch (failure) {
    toast(errorText(failure), 'error');
    button.disabled = false;
  }
}

/** Stop searching: a table the player opened and sits at alone closes (it would wait for nobody and
 * count against his waiting tables); at anyone else's he gives his seat back. */
async function cancelSearch(game, button) {
  const st = game.st;
  button.disabled = true;
  const alone = st.table.seats.every((seat) => seat.kind !== 'human' || seat.player === st.you);
  try {
    if (game.isCreator() && alone) await post(`/api/tables/${encodeURIComponent(st.code)}/close`);
    else await post(`/api/tables/${encodeURIComponent(st.code)}/leave`);
  } catch (failure) {
    // Already gone (closed, left, started): the lobby is where the player wanted to go anyway.
    if (failure.status !== 404 && failure.status !== 409 && failure.status !== 410) {
      toast(errorText(failure), 'error');
      button.disabled = false;
      return;
    }
  }
  endSearch();
  navigate('#/');
}
