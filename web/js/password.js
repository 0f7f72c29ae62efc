// Changing one's password (on one's own profile): the current password and the new one. Every
// session of the account ends on the server, this browser's too, which gets a new one at once.
import { ApiError, errorText, post } from './api.js';
import { h } from './dom.js';
import { t } from './i18n.js';
import { toast } from './toast.js';

function field(label, input) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label', text: label }), input);
}

export function passwordPanel() {
  const error = h('p', { class: 'form-error', role: 'alert' });
  const current = h('input', { name: 'current_password', type: 'password', autocomplete: 'current-password', required: true, maxlength: '128' });
  const fresh = h('input', { name: 'new_password', type: 'password', autocomplete: 'new-password', required: true, minlength: '8', maxlength: '128' });
  const button = h('button', { class: 'btn primary', type: 'submit', text: t('password.submit') });
  const form = h(
    'form',
    {
      class: 'form password-form',
      id: 'password-form',
      onsubmit: async (event) => {
        event.preventDefault();
        error.textContent = '';
        if (fresh.value.length < 8 || fresh.value.length > 128) {
          error.textContent = t('auth.bad_password');
          return;
        }
        button.disabled = true;
        try {
          await post('/api/auth/password', { current_password: current.value, new_password: fresh.value });
          form.reset();
          toast(t('password.changed'), 'info', 6000);
        } catch (failure) {
          const fields = failure instanceof ApiError ? failure.fieldErrors() : {};
          error.textContent =
            failure instanceof ApiError && failure.code === 'wrong_password' ? t('password.wrong_current') : fields.new_password ? t('auth.bad_password') : errorText(failure);
        } finally {
          button.disabled = false;
        }
      },
    },
    field(t('password.current'), current),
    field(t('password.new'), fresh),
    h('p', { class: 'hint', text: t('password.hint') }),
    error,
    button,
  );
  return h('section', { class: 'panel', id: 'password-panel' }, h('h2', { text: t('password.title') }), form);
}
