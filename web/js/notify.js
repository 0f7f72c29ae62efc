// Notifications for things that happen while the player looks elsewhere: someone sat down at his
// table, or it became his turn while the tab is hidden. The tab title shows it, a sound plays
// (unless muted) and, if the player allowed it, the browser shows a notification.
import { t } from './i18n.js';

const MUTE_KEY = 'durak.muted'; // the table's mute toggle (web/js/table/sound.js)
let pageTitle = null; // what the page itself shows in the tab (the table's turn cue sets it)
let missed = []; // what happened while the tab was hidden, newest first (at most 3)
let wasMyTurn = false;
// The table sounds (web/js/table/sound.js) may take over playing: setSoundPlayer((kind) => ...).
let soundPlayer = null;

export function setSoundPlayer(play) {
  soundPlayer = play;
}

/** Ask for the browser's permission; call it from a click (browsers ignore it otherwise). */
export function askPermission() {
  if (typeof Notification === 'undefined' || Notification.permission !== 'default') return;
  Notification.requestPermission().catch(() => {});
}

function muted() {
  try {
    return localStorage.getItem(MUTE_KEY) === '1';
  } catch {
    return false;
  }
}

function beep(kind) {
  if (soundPlayer) {
    soundPlayer(kind);
    return;
  }
  if (muted()) return;
  try {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    const audio = new Context();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = kind === 'turn' ? 880 : 660;
    gain.gain.setValueAtTime(0.08, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + 0.35);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.35);
    tone.onended = () => audio.close();
  } catch {
    // no audio here: the title and the notification still tell
  }
}

/** Write the tab title only when it changes: a write (even of the same text) costs the browser work
 * on every update of a match, right on the path from a tap to its card on the table. */
function showTitle() {
  const base = pageTitle ?? t('app.title');
  const title = missed.length ? `(!) ${missed.join(' · ')} — ${base}` : base;
  if (document.title !== title) document.title = title;
}

/** The page's own tab title; what was missed while the tab was hidden stays in front of it. */
export function setPageTitle(title) {
  pageTitle = title;
  showTitle();
}

function restoreTitle() {
  if (document.visibilityState === 'visible' && missed.length) {
    missed = [];
    showTitle();
  }
}

document.addEventListener('visibilitychange', restoreTitle);

/** kind: 'join' ({name}) or 'turn'. */
export function notify(kind, params = {}) {
  const text = kind === 'turn' ? t('notify.your_turn') : t('notify.joined', { name: params.name || '' });
  beep(kind);
  if (document.visibilityState !== 'hidden') return;
  missed = [text, ...missed.filter((item) => item !== text)].slice(0, 3);
  showTitle();
  if (typeof Notification !== 'undefined' && Notification.permission === 'granted') {
    try {
      const shown = new Notification(t('app.name'), { body: text, tag: `durak-${kind}` });
      shown.onclick = () => {
        window.focus();
        shown.close();
      };
    } catch {
      // some browsers allow notifications only from a service worker
    }
  }
}

/** Called with each table message (welcome / update) for the seat it is meant for. */
export function noticeTable(message) {
  const seat = message.seat ?? null;
  if (seat === null) {
    wasMyTurn = false;
    return;
  }
  if (message.type === 'update') {
    for (const event of message.events || []) {
      if (event.type === 'seat' && event.kind === 'human' && event.seat !== seat) notify('join', { name: event.name });
    }
  }
  const view = message.view;
  const playing = message.table && message.table.status === 'playing';
  const myTurn = Boolean(playing && view && view.decision && view.decision.seats.includes(seat));
  if (myTurn && !wasMyTurn && document.visibilityState === 'hidden') notify('turn');
  wasMyTurn = myTurn;
}
