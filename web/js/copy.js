// Links to hand on: a read-only field with Copy, and Share where the device has a share sheet.
import { h, uid } from './dom.js';
import { icon } from './icons.js';
import { t } from './i18n.js';
import { toast } from './toast.js';

export async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    if (input) {
      input.select();
      document.execCommand('copy');
    }
  }
  toast(t('common.copied'));
}

/** Hand the link to the phone's share sheet (Telegram, WhatsApp...); false when there is none. */
export async function shareLink(url, { title, text } = {}) {
  if (!navigator.share) return false;
  try {
    await navigator.share({ title, text, url });
  } catch (error) {
    if (error && error.name === 'AbortError') return true; // the player closed the sheet
    return false;
  }
  return true;
}

/** A read-only link with "Copy"; with `share` ({title, text}) and a share sheet, "Share" first. */
export function linkField(label, url, id, { share = null } = {}) {
  const inputId = id || uid('link');
  const input = h('input', { id: inputId, class: 'link-input', readonly: true, value: url, onfocus: (event) => event.target.select() });
  const shareButton =
    share && navigator.share
      ? h('button', {
          type: 'button',
          class: 'btn primary share-button',
          'aria-label': `${t('common.share')}: ${label}`,
          dataset: { share: inputId },
          onclick: async () => {
            if (!(await shareLink(url, share))) copyText(url, input);
          },
        }, icon('share'), h('span', { text: t('common.share') }))
      : null;
  return h(
    'div',
    { class: 'link-field' },
    h('label', { class: 'field-label', for: inputId, text: label }),
    h(
      'div',
      { class: 'link-row' },
      input,
      shareButton,
      h('button', {
        type: 'button',
        class: 'btn',
        'aria-label': `${t('common.copy')}: ${label}`,
        dataset: { copy: inputId },
        onclick: () => copyText(url, input),
      }, icon('copy'), h('span', { text: t('common.copy') })),
    ),
  );
}

/** The spectator link of a table this browser created (the invite page cannot ask the server for it). */
export function rememberWatchUrl(code, url) {
  try {
    localStorage.setItem(`durak.watch.${code}`, url);
  } catch {
    /* storage unavailable */
  }
}

export function watchUrlFor(code) {
  try {
    return localStorage.getItem(`durak.watch.${code}`);
  } catch {
    return null;
  }
}
