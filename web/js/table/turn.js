// A turn you cannot miss: when the match starts waiting for us the tab title reads "● Your turn",
// a chime plays and the phone buzzes; sounds for what happened on the table; the last seconds
// of our timer tick.
import { t } from '../i18n.js';
import { setPageTitle } from '../notify.js';
import { playSound, playSoundAfterPaint } from './sound.js';

let lastTick = null;

/** Sounds for an update's events (others' moves and the bout's end; our own move sounds at once). */
export function eventSounds(events, mySeat, results) {
  let sound = null;
  for (const event of events || []) {
    if (event.type === 'move' && event.seat !== mySeat) sound = sound || 'card';
    else if (event.type === 'bout_end') sound = event.result !== 'taken' ? 'beaten' : event.defender === mySeat ? sound : 'take'; // our own take sounded on the click
    else if (event.type === 'match_end' && mySeat !== null) {
      const outcome = event.outcome || (results && results.outcome) || {};
      sound = !outcome.draw && outcome.durak === mySeat ? 'lose' : 'win';
    }
  }
  if (sound) playSoundAfterPaint(sound); // after the frame that shows the move
}

/** Title, chime and buzz when our decision starts; the title back when it ends. */
export function turnCues(wasMine, isMine) {
  const base = t('app.title');
  setPageTitle(isMine ? `\u25CF ${t('table.your_turn')} · ${base}` : base);
  if (isMine && !wasMine) {
    playSoundAfterPaint('turn');
    // Chromium refuses (and logs an error) a vibration before the first tap on the page.
    const tapped = !navigator.userActivation || navigator.userActivation.hasBeenActive;
    if (navigator.vibrate && tapped) {
      try {
        navigator.vibrate(60);
      } catch {
        /* not allowed without a gesture */
      }
    }
  }
}

/** One tick a second in the last five seconds of our own decision. */
export function timerTick(left) {
  if (left <= 0 || left > 5000) {
    lastTick = null;
    return;
  }
  const second = Math.ceil(left / 1000);
  if (second !== lastTick) {
    lastTick = second;
    playSound('tick');
  }
}
