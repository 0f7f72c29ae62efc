// The table's chat panel: lines (always built as text, never as markup), quick phrases sent by key
// and shown in this page's language, a per-player mute remembered in localStorage, and "report".
// The panel keeps one element for the life of the page, so a re-render of the table keeps what is
// being typed.

import { errorText, post } from '../api.js';
import { h, replaceKeepingFocus } from '../dom.js';
import { t } from '../i18n.js';
import { icon } from '../icons.js';
import { currentUser } from '../session.js';
import { toast } from '../toast.js';
import { clockText } from './describe.js';

export const PHRASES = ['gg', 'hurry', 'well_played', 'oops', 'hello', 'thanks', 'nice_move', 'bad_luck'];
const MAX_LINES = 200;
const MAX_TEXT = 200;
const MUTED_KEY = 'durak.chat.muted';
// Where the open chat is a sheet at the foot of the screen (app.css "The chat"), and the room under
// which it keeps only its newest line and the input.
const SHEET_LAYOUT = window.matchMedia('(max-width: 600px), (max-height: 500px)');
const CRAMPED_BELOW = 190;
const MUST_ACT = ['lead', 'defend'];

/** A quick phrase in this page's language (literal keys, so the translation test sees them). */
export function phraseText(key) {
  switch (key) {
    case 'gg':
      return t('chat.phrase.gg');
    case 'hurry':
      return t('chat.phrase.hurry');
    case 'well_played':
      return t('chat.phrase.well_played');
    case 'oops':
      return t('chat.phrase.oops');
    case 'hello':
      return t('chat.phrase.hello');
    case 'thanks':
      return t('chat.phrase.thanks');
    case 'nice_move':
      return t('chat.phrase.nice_move');
    case 'bad_luck':
      return t('chat.phrase.bad_luck');
    default:
      return key;
  }
}

function errorNote(code) {
  switch (code) {
    case 'chat_off':
      return t('chat.error.chat_off');
    case 'chat_empty':
      return t('chat.error.chat_empty');
    case 'chat_forbidden':
      return t('chat.error.chat_forbidden');
    default:
      return code;
  }
}

function loadMuted() {
  try {
    const saved = JSON.parse(localStorage.getItem(MUTED_KEY) || '{}');
    return saved && typeof saved === 'object' && !Array.isArray(saved) ? saved : {};
  } catch {
    return {};
  }
}

function saveMuted(muted) {
  try {
    localStorage.setItem(MUTED_KEY, JSON.stringify(muted));
  } catch {
    // private mode: the mute lasts for this page only
  }
}

/** The chat panel of a table page: `el` goes into the page, `add(message)` takes a chat message,
 * `onError(message)` takes an error and says whether it was the chat's, `update()` redraws. */
export function chatPanel(game, socket) {
  const lines = [];
  let counter = 0;
  const seen = new Set();
  const muted = loadMuted(); // player key -> name
  let note = '';
  let noteTimer = null;
  let reporting = null; // the line whose author is being reported
  const input = h('input', { type: 'text', id: 'chat-input', maxlength: MAX_TEXT, autocomplete: 'off', 'aria-label': t('chat.input_label'), placeholder: t('chat.placeholder'), dataset: { key: 'chat-input' } });
  const list = h('ol', { class: 'chat-lines', id: 'chat-lines', 'aria-live': 'polite' });
  const body = h('div', { class: 'chat-body' });
  // The toggle: an SVG icon (an emoji may have no font on a phone) with the unread count.
  const label = h('span', { class: 'chat-label', text: t('chat.title') });
  const unreadBadge = h('span', { class: 'unread', id: 'chat-unread', hidden: true, 'aria-hidden': 'true' });
  const summary = h('summary', { id: 'chat-toggle', dataset: { key: 'chat-toggle' } }, icon('chat'), label, unreadBadge);
  // On a phone the open chat is a sheet at the foot of the screen; its head says whose turn it is, so
  // the sheet never hides that the match waits for the player.
  const sheetTitle = h('h2', { class: 'chat-sheet-title', text: t('chat.title') });
  const turnPill = h('span', { class: 'chat-turn', id: 'chat-turn', role: 'status', hidden: true });
  const closeButton = h('button', { type: 'button', class: 'btn ghost icon-button chat-close', id: 'chat-close', 'aria-label': t('chat.close'), onclick: () => setOpen(false) }, icon('close'));
  const head = h('div', { class: 'chat-sheet-head' }, sheetTitle, turnPill, closeButton);
  const sheet = h('div', { class: 'chat-sheet' }, head, body);
  const el = h('details', { class: 'panel chat-panel', id: 'chat' }, summary, sheet);
  let placed = false; // opened or left folded once the table is known (folded over a running match)
  let unread = 0;
  let mustActBefore = false; // the player had to lead or defend at the last tick
  // Whether the reader is at the newest line (kept by the list's own scrolling): new lines then keep
  // him there, and the chat opens there. Known without reading the layout, which update() (run with
  // every change of the table) must not do.
  let atNewest = true;
  list.addEventListener('scroll', () => {
    atNewest = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  }, { passive: true });
  el.addEventListener('toggle', () => {
    place();
    if (el.open) {
      unread = 0;
      showUnread();
      if (atNewest) list.scrollTop = list.scrollHeight;
    }
  });

  function setOpen(open) {
    el.open = open;
  }

  function showUnread() {
    unreadBadge.hidden = unread === 0;
    unreadBadge.textContent = unread > 9 ? '9+' : String(unread);
    summary.setAttribute('aria-label', unread ? t('chat.unread', { count: unread }) : t('chat.title'));
  }

  /** On a phone the sheet stands on the player's own row (his seat, its countdown, the action bar
   * with Take and Challenge, the hand) and under the opponents, never over them: `--chat-floor` is
   * the height it leaves free at the foot of the screen, `--chat-room` the height it may take. With
   * little room (a phone held sideways) it keeps only the newest line and the input ("cramped"). */
  function place() {
    const inMatch = game.container.classList.contains('in-match');
    if (!el.open || !inMatch || !SHEET_LAYOUT.matches) {
      if (sheet.style.length) sheet.removeAttribute('style');
      sheet.classList.remove('cramped', 'standing');
      return;
    }
    const viewport = window.innerHeight;
    const mine = game.container.querySelector('#me-area');
    const opponents = game.container.querySelector('#opponents');
    const floor = mine ? Math.max(0, Math.round(viewport - mine.getBoundingClientRect().top + 4)) : 0;
    const ceiling = opponents ? Math.round(opponents.getBoundingClientRect().bottom + 4) : 0;
    const room = Math.max(0, viewport - floor - ceiling);
    const floorText = `${floor}px`;
    const roomText = `${room}px`;
    if (sheet.style.getPropertyValue('--chat-floor') !== floorText) sheet.style.setProperty('--chat-floor', floorText);
    if (sheet.style.getPropertyValue('--chat-room') !== roomText) sheet.style.setProperty('--chat-room', roomText);
    if (sheet.classList.contains('standing') !== floor > 0) sheet.classList.toggle('standing', floor > 0);
    const cramped = room < CRAMPED_BELOW;
    if (sheet.classList.contains('cramped') !== cramped) sheet.classList.toggle('cramped', cramped);
  }

  /** Every tick of the page: the sheet keeps off the player's row and the opponents; its head shows
   * the player's turn and its time left; on a phone it folds away when the player must lead or
   * defend (unless he is typing), so the cards he must answer are in view. */
  function tick() {
    const st = game.st;
    const mustAct = Boolean(st.seat !== null && st.view && st.table && st.table.status === 'playing' && MUST_ACT.includes(st.view.decision.kind) && st.view.decision.seats.includes(st.seat));
    if (mustAct && !mustActBefore && el.open && SHEET_LAYOUT.matches && document.activeElement !== input) setOpen(false);
    mustActBefore = mustAct;
    place();
    const mine = el.open && st.seat !== null && game.decidingSeats().includes(st.seat);
    if (turnPill.hidden === mine) turnPill.hidden = !mine;
    if (!mine) return;
    const deadline = game.deadlineOf(st.seat);
    const left = deadline ? Math.max(0, deadline.at - performance.now()) : null;
    const seconds = left === null ? null : Math.ceil(left / 1000);
    // "Your turn · 42 s" under a minute, "Your turn · 4:05" above (as the seat's ring says it).
    let text = t('table.your_turn');
    if (seconds !== null) text = seconds < 60 ? t('chat.your_turn_left', { seconds }) : t('chat.your_turn_clock', { time: clockText(left) });
    if (turnPill.textContent !== text) turnPill.textContent = text;
  }

  function relabel() {
    label.textContent = t('chat.title');
    sheetTitle.textContent = t('chat.title');
    closeButton.setAttribute('aria-label', t('chat.close'));
    input.setAttribute('aria-label', t('chat.input_label'));
    input.setAttribute('placeholder', t('chat.placeholder'));
    showUnread();
    update();
  }

  function say(type, fields) {
    counter += 1;
    if (!socket.send({ type, id: `chat-${counter}`, ...fields })) showNote(t('chat.offline'));
  }

  function send(event) {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    say('chat', { text: text.slice(0, MAX_TEXT) });
    input.value = '';
  }

  function showNote(text) {
    note = text;
    clearTimeout(noteTimer);
    noteTimer = setTimeout(() => {
      note = '';
      update();
    }, 6000);
    update();
  }

  function add(message) {
    if (message.id && seen.has(message.id)) return;
    if (message.id) seen.add(message.id);
    lines.push(message);
    if (lines.length > MAX_LINES) lines.shift();
    const mine = game.st.you && message.from && message.from.player === game.st.you;
    if (!el.open && !mine && !(message.from && muted[message.from.player])) {
      unread += 1;
      showUnread();
    }
    update();
  }

  function onError(message) {
    if (!message.code || !message.code.startsWith('chat_')) return false;
    if (message.code === 'chat_rate_limited') showNote(t('chat.rate_limited', { seconds: Math.ceil((message.retry_after_ms || 1000) / 1000) }));
    else showNote(errorNote(message.code));
    return true;
  }

  function toggleMute(player, name) {
    if (muted[player]) delete muted[player];
    else muted[player] = name;
    saveMuted(muted);
    update();
  }

  async function report(line, reason) {
    try {
      await post(`/api/tables/${encodeURIComponent(game.st.code)}/report`, { player: line.from.player, reason });
      toast(t('chat.reported', { name: line.from.name }), 'info');
      reporting = null;
      update();
    } catch (error) {
      toast(errorText(error), 'error');
    }
  }

  function lineItem(line) {
    const me = game.st.you && line.from.player === game.st.you;
    const said = line.key ? phraseText(line.key) : line.text;
    const spectator = line.channel === 'spectators';
    return h(
      'li',
      { class: ['chat-line', spectator && 'from-spectator', line.key && 'phrase'], dataset: { player: line.from.player } },
      h('span', { class: 'chat-name', text: line.from.name }),
      line.from.guest ? h('span', { class: 'badge guest', text: t('chat.guest') }) : null,
      spectator ? h('span', { class: 'badge', text: t('chat.spectator') }) : null,
      h('span', { class: 'chat-text', text: said }),
      me ? null : h('button', { type: 'button', class: 'link chat-mute', 'aria-label': t('chat.mute_name', { name: line.from.name }), text: t('chat.mute'), onclick: () => toggleMute(line.from.player, line.from.name) }),
      me || !currentUser() ? null : h('button', { type: 'button', class: 'link chat-report', 'aria-label': t('chat.report_name', { name: line.from.name }), text: t('chat.report'), onclick: () => { reporting = line; update(); } }),
    );
  }

  function reportForm() {
    const reason = h('input', { type: 'text', id: 'chat-report-reason', maxlength: 500, required: true, 'aria-label': t('chat.report_reason'), placeholder: t('chat.report_reason'), dataset: { key: 'chat-report-reason' } });
    return h(
      'form',
      { class: 'chat-report-form', onsubmit: (event) => { event.preventDefault(); if (reason.value.trim()) report(reporting, reason.value.trim()); } },
      h('p', { text: t('chat.report_title', { name: reporting.from.name }) }),
      reason,
      h('button', { type: 'submit', class: 'btn', text: t('chat.report_send') }),
      h('button', { type: 'button', class: 'btn', text: t('chat.cancel'), onclick: () => { reporting = null; update(); } }),
    );
  }

  function update() {
    const table = game.st.table;
    if (table && !placed) {
      // Open by itself only for a seated player before the match on a wide screen: never over a
      // running match, never for a spectator, never on a phone (where it would cover the table).
      placed = true;
      el.open = table.status === 'waiting' && game.st.seat !== null && window.innerWidth > 900;
    }
    list.replaceChildren(...lines.filter((line) => !muted[line.from.player]).map(lineItem));
    if (el.open && atNewest) list.scrollTop = list.scrollHeight;
    const parts = [list];
    const mutedKeys = Object.keys(muted);
    if (mutedKeys.length) {
      parts.push(
        h('p', { class: 'chat-muted muted' }, t('chat.muted_list'), ' ', ...mutedKeys.map((key) => h('button', { type: 'button', class: 'link chat-unmute', text: t('chat.unmute_name', { name: muted[key] }), onclick: () => toggleMute(key, muted[key]) }))),
      );
    }
    if (reporting) parts.push(reportForm());
    if (table && table.chat === false) {
      parts.push(h('p', { class: 'muted chat-off', text: t('chat.off') }));
    } else if (!currentUser()) {
      parts.push(h('p', { class: 'muted', text: t('chat.sign_in') }));
    } else {
      if (game.st.seat === null && table && table.status === 'playing' && table.rules && table.rules.stake > 0) {
        parts.push(h('p', { class: 'muted chat-hint', text: t('chat.spectators_only') }));
      }
      parts.push(
        h('div', { class: 'chat-phrases', role: 'group', 'aria-label': t('chat.phrases') }, PHRASES.map((key) => h('button', { type: 'button', class: 'chip', dataset: { phrase: key, key: `phrase-${key}` }, text: phraseText(key), onclick: () => say('chat_phrase', { key }) }))),
        h('form', { class: 'chat-form', onsubmit: send }, input, h('button', { type: 'submit', class: 'btn', text: t('chat.send') })),
      );
    }
    if (note) parts.push(h('p', { class: 'chat-note', role: 'status', text: note }));
    replaceKeepingFocus(body, parts);
  }

  update();
  showUnread();
  return { el, add, onError, update, tick, relabel, stop() { clearTimeout(noteTimer); }, get toggle() { return summary; } };
}
