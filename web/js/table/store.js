// The table page's one store. Its state is read-only to everyone (a write to `store.state` throws);
// `set(patch)` changes it, and the changes of one task are drawn together in a microtask. A part
// (`part(name, select, draw)`) is a fixed element of the page that redraws only when what it
// `select`s from the state differs from its last drawing; a write while the parts draw throws, so a
// drawing can never feed itself. An effect (`effect(fn)`) runs after the parts have drawn, with
// the names of the keys that changed: sounds, the tab title, the leave guard.
//
//   const store = createStore({seat: null, view: null});
//   const hand = store.part('hand', (s) => [s.view, s.busy], (s) => h(...));   // hand.el goes into the page
//   store.set({view, busy: null});   // the hand redraws once, at the end of this task
//
// `set(patch, {later: ['hand']})` leaves the named parts as they are in this drawing and draws them
// after the next frame is on the screen (the key 'later' then marks that drawing): a tap shows its
// card on the table in the first frame, and the hand closes up behind it in the next.
//
// Each part counts its drawings in `data-draws` (the tests read it: one's own move is drawn once).
import { append } from '../dom.js';

/** Equal selections: the same length and, item by item, the same value (=== or equal JSON text). */
function same(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function createStore(initial) {
  const data = { ...initial };
  const state = new Proxy(data, {
    set(_target, key) {
      throw new Error(`table state "${String(key)}" is set through the store`);
    },
    deleteProperty(_target, key) {
      throw new Error(`table state "${String(key)}" is set through the store`);
    },
  });
  const parts = [];
  const effects = [];
  const changed = new Set();
  let drawing = false;
  let queued = false;
  let hold = null; // () => boolean: while true the drawing waits (a finger is down), see page.flush
  let before = null; // () => extra, run before the parts draw (e.g. measuring cards that will fly)
  let after = null; // (extra, keys) after they drew
  let later = new Set(); // names of parts the next drawing leaves for the one after the next frame
  let laterQueued = false;

  function set(patch, { later: names = null } = {}) {
    if (drawing) throw new Error(`table state written while drawing: ${Object.keys(patch).join(', ')}`);
    let news = false;
    for (const [key, value] of Object.entries(patch)) {
      if (data[key] === value) continue;
      data[key] = value;
      changed.add(key);
      news = true;
    }
    if (news && names) for (const name of names) later.add(name);
    if (changed.size) schedule();
  }

  function schedule() {
    if (queued) return;
    queued = true;
    queueMicrotask(flush);
  }

  /** Draw what changed now (unless held: then the next `flush()` does). */
  function flush() {
    queued = false;
    if (!changed.size || (hold && hold())) return;
    const keys = new Set(changed);
    changed.clear();
    const waiting = later;
    later = new Set();
    const extra = before ? before(keys) : null;
    drawing = true;
    try {
      // Every changed part draws its new content first, off the page; then all of them go in at
      // once. Nothing in the page changes between the measuring (`before`) and the swap, so the
      // browser lays the page out once, for the new content (not again for each part swapped, as
      // when the focused card was removed after another part had changed the layout).
      const drawn = [];
      let left = false;
      for (const p of parts) {
        const now = p.select(state);
        if (same(now, p.last)) continue;
        if (waiting.has(p.name)) {
          left = true;
          continue;
        }
        p.last = now;
        const content = p.draw(state);
        drawn.push([p, [content]]);
      }
      if (drawn.length) swap(drawn);
      if (left) drawLater();
    } finally {
      drawing = false;
    }
    if (after) after(extra, keys);
    for (const fn of effects) fn(keys);
  }

  /** The parts left by a drawing are drawn once the frame it made is on the screen. */
  function drawLater() {
    if (laterQueued) return;
    laterQueued = true;
    const run = () => {
      laterQueued = false;
      changed.add('later');
      schedule();
    };
    if (document.hidden) setTimeout(run, 0);
    else requestAnimationFrame(() => setTimeout(run, 0));
  }

  /** Put the parts' new content in, keeping keyboard focus on the element with the same data-key
   * (or the part's `focus` selector) when it was in a part that changed (as replaceKeepingFocus). */
  function swap(drawn) {
    const active = document.activeElement;
    const owner = active && active !== document.body ? drawn.find(([p]) => p.el.contains(active)) : null;
    const key = owner ? active.dataset.key : null;
    // Let go of the focus before anything moves: removing the focused element after the page has
    // changed makes the browser lay it out there and then (a forced layout in the middle of the swap).
    if (owner) active.blur();
    for (const [p, children] of drawn) {
      p.el.replaceChildren();
      append(p.el, children);
      p.el.dataset.draws = String(Number(p.el.dataset.draws) + 1);
    }
    if (!key) return;
    const [p] = owner;
    const again = p.el.querySelector(`[data-key="${CSS.escape(key)}"]`);
    // The fallback is looked for in the part first, then in the page (a part may be one of several
    // that make up an area: the hand's fallback can be a button of the action bar).
    const target = again || (p.focus ? p.el.querySelector(p.focus) || document.querySelector(p.focus) : null);
    if (target) target.focus({ preventScroll: true });
  }

  /** Draw the parts for the state with `patch` applied, off the page, and throw the drawings away:
   * the code of a change the page has not drawn yet runs once, before it is needed (the table page's
   * `rehearseTap`). The state, the page and each part's last selection stay as they were. */
  function rehearse(patch) {
    if (drawing) throw new Error('a rehearsal while drawing');
    const saved = {};
    for (const key of Object.keys(patch)) saved[key] = data[key];
    Object.assign(data, patch);
    drawing = true;
    try {
      for (const p of parts) if (!same(p.select(state), p.last)) p.draw(state);
    } finally {
      drawing = false;
      Object.assign(data, saved);
    }
  }

  /** Redraw every part on the next flush (a new language, another user). */
  function invalidate() {
    for (const p of parts) p.last = null;
    changed.add('*');
    schedule();
  }

  function part(name, select, draw, { tag = 'div', focus = null, attrs = null } = {}) {
    const el = document.createElement(tag);
    el.className = 'part';
    el.dataset.part = name;
    el.dataset.draws = '0';
    if (attrs) for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
    const p = { name, el, last: null, select, draw, focus };
    parts.push(p);
    return p;
  }

  return {
    state,
    set,
    flush,
    invalidate,
    rehearse,
    part,
    effect(fn) {
      effects.push(fn);
    },
    around(beforeFn, afterFn) {
      before = beforeFn;
      after = afterFn;
    },
    holdWhile(fn) {
      hold = fn;
    },
    get drawing() {
      return drawing;
    },
  };
}

/** A selection item for an object that is replaced with each message but often equal: its JSON. */
export function json(value) {
  return value === undefined ? 'undefined' : JSON.stringify(value);
}
