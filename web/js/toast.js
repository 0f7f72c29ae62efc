// Short messages in the corner (errors from the server, "link copied").
import { h } from './dom.js';

export function toast(text, kind = 'info', ms = 3500) {
  const box = document.getElementById('toasts');
  if (!box) return;
  const item = h('div', { class: ['toast', kind], text });
  box.append(item);
  setTimeout(() => item.remove(), ms);
}
