// Sign up / log in / play as guest, as one panel with three tabs.
import { errorText } from './api.js';
import { h, uid } from './dom.js';
import { t } from './i18n.js';
import { logIn, playAsGuest, signUp, suggestedGuestName } from './session.js';

function field(label, input, error) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label', text: label }), input, error);
}

/** `onDone(me)` runs after a successful sign-in of any kind. `guest: false` hides the guest tab. */
export function authPanel({ onDone, guest = true, initial = 'login' } = {}) {
  const tabs = [
    ['login', t('auth.login')],
    ['signup', t('auth.signup')],
  ];
  if (guest) tabs.push(['guest', t('auth.guest')]);
  let mode = initial;
  const body = h('div', { class: 'auth-body' });
  const tablist = h('div', { class: 'tabs', role: 'tablist', 'aria-label': t('auth.title') });
  const panel = h('section', { class: 'panel auth-panel', 'aria-label': t('auth.title') }, tablist, body);

  function renderTabs() {
    tablist.replaceChildren(
      ...tabs.map(([name, label]) =>
        h('button', {
          type: 'button',
          role: 'tab',
          class: ['tab', mode === name && 'active'],
          'aria-selected': mode === name ? 'true' : 'false',
          id: `auth-tab-${name}`,
          onclick: () => {
            mode = name;
            render();
          },
          text: label,
        }),
      ),
    );
  }

  function render() {
    renderTabs();
    const error = h('p', { class: 'form-error', role: 'alert' });
    const nameId = uid('name');
    const name = h('input', {
      id: nameId,
      name: 'name',
      autocomplete: mode === 'guest' ? 'nickname' : 'username',
      required: true,
      minlength: '2',
      maxlength: '24',
      pattern: '[A-Za-z0-9_\\-]+',
      value: mode === 'guest' ? suggestedGuestName(t('auth.guest_name_prefix')) : '',
    });
    const password =
      mode === 'guest'
        ? null
        : h('input', {
            name: 'password',
            type: 'password',
            autocomplete: mode === 'signup' ? 'new-password' : 'current-password',
            required: true,
            minlength: mode === 'signup' ? '8' : '1',
          });
    const submitText = mode === 'login' ? t('auth.login_submit') : mode === 'signup' ? t('auth.signup_submit') : t('auth.guest_submit');
    const form = h(
      'form',
      {
        class: 'form auth-form',
        dataset: { mode },
        onsubmit: async (event) => {
          event.preventDefault();
          error.textContent = '';
          const button = form.querySelector('button[type=submit]');
          button.disabled = true;
          try {
            let me;
            if (mode === 'login') me = await logIn(name.value.trim(), password.value);
            else if (mode === 'signup') me = await signUp(name.value.trim(), password.value);
            else me = await playAsGuest(name.value.trim());
            if (onDone) await onDone(me);
          } catch (failure) {
            const fields = failure.fieldErrors ? failure.fieldErrors() : {};
            error.textContent = fields.name
              ? t('auth.bad_name')
              : fields.password
                ? t('auth.bad_password')
                : failure.status === 401
                  ? t('auth.wrong_password')
                  : failure.status === 409
                    ? t('auth.name_taken')
                    : errorText(failure);
          } finally {
            button.disabled = false;
          }
        },
      },
      field(t('auth.name'), name, h('small', { class: 'hint', text: t('auth.name_hint') })),
      password ? field(mode === 'signup' ? t('auth.password_new') : t('auth.password'), password) : null,
      mode === 'guest' ? h('p', { class: 'hint', text: t('auth.guest_hint') }) : null,
      error,
      h('button', { class: 'btn primary', type: 'submit', text: submitText }),
    );
    body.replaceChildren(form);
  }

  render();
  return panel;
}
