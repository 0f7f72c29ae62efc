// In-page questions (a <dialog>, never the browser's confirm()): leaving a running match names what
// it costs; the first cheat of a match says which rule the card breaks, with "don't ask again".
//
//   const ok = await confirmDialog({title, text, confirm, cancel, danger, optOut});
//   // ok: false (cancelled) or {optOut: boolean}
import { h } from '../dom.js';

let open = null; // the dialog on screen (one at a time)

export function confirmDialog({ id = 'confirm-dialog', title, text, confirm, cancel, danger = false, optOut = null }) {
  if (open) open.close('cancel');
  return new Promise((resolve) => {
    const box = optOut ? h('input', { type: 'checkbox', id: `${id}-opt-out` }) : null;
    const dialog = h(
      'dialog',
      { class: ['table-dialog', danger && 'danger'], id, 'aria-labelledby': `${id}-title` },
      h(
        'form',
        { method: 'dialog', class: 'table-dialog-body' },
        h('h2', { id: `${id}-title`, text: title }),
        h('p', { id: `${id}-text`, text }),
        optOut ? h('label', { class: 'check opt-out' }, box, h('span', { text: optOut })) : null,
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'submit', value: 'cancel', class: 'btn ghost', id: `${id}-cancel`, text: cancel }),
          h('button', { type: 'submit', value: 'ok', class: ['btn', danger ? 'danger' : 'primary'], id: `${id}-ok`, text: confirm }),
        ),
      ),
    );
    dialog.addEventListener('close', () => {
      if (open === dialog) open = null;
      dialog.remove();
      resolve(dialog.returnValue === 'ok' ? { optOut: Boolean(box && box.checked) } : false);
    });
    document.body.append(dialog);
    open = dialog;
    dialog.showModal();
    dialog.querySelector(`#${id}-cancel`).focus();
  });
}
