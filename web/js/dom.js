// Tiny DOM helpers: build elements without innerHTML, so user data is never parsed as markup.

/**
 * h('button', {class: 'btn', onclick: fn, 'aria-label': 'x', dataset: {key: 'a'}}, 'text', child)
 * Attributes named on* become listeners; `text` sets textContent; false/null attributes are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    } else if (name === 'dataset') {
      for (const [key, data] of Object.entries(value)) el.dataset[key] = data;
    } else if (name === 'text') {
      el.textContent = value;
    } else if (name === 'style' && typeof value === 'object') {
      Object.assign(el.style, value);
    } else if (name in el && typeof value !== 'string') {
      el[name] = value; // properties such as checked, value, disabled
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** Replace the children of `el`, keeping keyboard focus on the element with the same data-key. */
export function replaceKeepingFocus(el, children, fallbackSelector) {
  const active = document.activeElement;
  const key = active && el.contains(active) ? active.dataset.key : null;
  clear(el);
  append(el, children);
  if (key) {
    const again = el.querySelector(`[data-key="${CSS.escape(key)}"]`);
    const target = again || (fallbackSelector ? el.querySelector(fallbackSelector) : null);
    if (target) target.focus({ preventScroll: true });
  }
}

export function uid(prefix = 'id') {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/** A finger's tap on `el` acts when the finger lifts (`touchend`), not on the click the browser
 * makes of it a few tens of ms later; the touchend is cancelled, so no click follows (the page has
 * changed under the finger by then, and a click there would land on whatever is there now). A touch
 * that moved (a drag, a scroll of a long hand) or that more than one finger made is left alone. */
export function fingerTap(el, act) {
  let start = null;
  el.addEventListener('touchstart', (event) => {
    const touch = event.touches.length === 1 ? event.touches[0] : null;
    start = touch ? { x: touch.clientX, y: touch.clientY } : null;
  }, { passive: true });
  el.addEventListener('touchend', (event) => {
    const touch = event.changedTouches[0];
    const from = start;
    start = null;
    if (!from || !touch || event.touches.length || el.dataset.dragged /* hand.js: a drag's end */) return;
    if (Math.hypot(touch.clientX - from.x, touch.clientY - from.y) >= 14) return;
    if (event.cancelable) event.preventDefault();
    else return; // the browser makes its click after all: that click acts
    act();
  });
}
