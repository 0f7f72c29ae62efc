// Open a table: every parameter of §1, the presets of §11, bots, then the invite and watch links.
import { ApiError, errorText, get, post } from '../api.js';
import { authPanel } from '../auth.js';
import { linkField, rememberWatchUrl } from '../copy.js';
import { h, uid } from '../dom.js';
import { formatNumber, t } from '../i18n.js';
import { presetDescription, presetName } from '../rules.js';
import { currentUser, onUserChange, refreshMe } from '../session.js';

export const MAX_SEATS = { 24: 4, 36: 6, 52: 6 };
const TIMERS = [0, 10, 20, 30, 60, 90, 120];
const PRESET_DEFAULTS = {
  durak_peak: { deck: 36, transfer: false, circle: 'all', draws: true },
  classic36: { deck: 36, transfer: false, circle: 'all', draws: true },
  durac1993: { deck: 52, transfer: true, circle: 'all', draws: true },
};

function defaults() {
  return {
    preset: 'durak_peak',
    name: '',
    deck: 36,
    seats: 2,
    circle: 'all',
    transfer: false,
    draws: true,
    timer: 30,
    stake: 0,
    cheating: false,
    private: false,
    chat: true,
    join: true,
    bot_delay_ms: 600,
    bots: {},
  };
}

export function mount(root) {
  const state = defaults();
  let presets = [
    { name: 'durak_peak', label: '' },
    { name: 'classic36', label: '' },
    { name: 'durac1993', label: '' },
  ];
  let errors = {};
  let formError = '';
  let created = null;
  let busy = false;
  let tooMany = false; // the last try was refused for too many waiting tables: a way to them
  let gone = false; // another page took the screen: a late answer draws nothing

  get('/api/presets')
    .then((list) => {
      if (gone) return;
      presets = list;
      // Only the presets' picker: the rest of the form stays as it is being filled.
      const picker = root.querySelector('#create-form .presets');
      if (picker) picker.replaceWith(presetPicker());
      else render();
    })
    .catch(() => {});

  function set(changes) {
    Object.assign(state, changes);
    if (state.seats > MAX_SEATS[state.deck]) state.seats = MAX_SEATS[state.deck];
    if (state.preset === 'classic36') Object.assign(state, { deck: 36, transfer: false, draws: true });
    if (state.stake > 0) state.bots = {};
    for (const seat of Object.keys(state.bots)) if (Number(seat) >= state.seats) delete state.bots[seat];
    for (const name of Object.keys(changes)) delete errors[name];
    render();
  }

  function fieldBox(name, label, control, hint) {
    const errorId = `err-${name}`;
    return h(
      'div',
      { class: ['field', errors[name] && 'invalid'], dataset: { field: name } },
      h('span', { class: 'field-label', id: `label-${name}`, text: label }),
      control,
      hint ? h('small', { class: 'hint', text: hint }) : null,
      h('p', { class: 'field-error', id: errorId, role: errors[name] ? 'alert' : null, text: errors[name] ? t('create.server_said', { message: errors[name] }) : '' }),
    );
  }

  function radios(name, options, value, { disabled = () => false } = {}) {
    return h(
      'div',
      { class: 'radios', role: 'radiogroup', 'aria-labelledby': `label-${name}` },
      options.map(([optionValue, text]) => {
        const id = uid(name);
        return h(
          'label',
          { class: ['radio', String(value) === String(optionValue) && 'checked', disabled(optionValue) && 'disabled'], for: id },
          h('input', {
            type: 'radio',
            id,
            name,
            value: String(optionValue),
            checked: String(value) === String(optionValue),
            disabled: disabled(optionValue),
            onchange: () => set({ [name]: typeof optionValue === 'number' ? Number(optionValue) : optionValue }),
          }),
          h('span', { text }),
        );
      }),
    );
  }

  function checkbox(name, label, { disabled = false, hint = null } = {}) {
    const id = uid(name);
    return h(
      'div',
      { class: ['field', 'check', errors[name] && 'invalid'], dataset: { field: name } },
      h(
        'label',
        { for: id, class: 'check-label' },
        h('input', { type: 'checkbox', id, name, checked: state[name], disabled, onchange: (event) => set({ [name]: event.target.checked }) }),
        h('span', { text: label }),
      ),
      hint ? h('small', { class: 'hint', text: hint }) : null,
      h('p', { class: 'field-error', id: `err-${name}`, text: errors[name] ? t('create.server_said', { message: errors[name] }) : '' }),
    );
  }

  function presetPicker() {
    return h(
      'div',
      { class: 'presets', role: 'radiogroup', 'aria-labelledby': 'label-preset' },
      presets.map((preset) => {
        const id = uid('preset');
        const checked = state.preset === preset.name;
        return h(
          'label',
          { class: ['preset', checked && 'checked'], for: id, dataset: { preset: preset.name } },
          h('input', {
            type: 'radio',
            id,
            name: 'preset',
            value: preset.name,
            checked,
            onchange: () => set({ preset: preset.name, ...PRESET_DEFAULTS[preset.name] }),
          }),
          h('span', { class: 'preset-name', text: presetName(preset.name) }),
          h('span', { class: 'preset-desc', text: presetDescription(preset.name, preset.label) }),
        );
      }),
    );
  }

  function botSeats() {
    const rows = [];
    const first = state.join ? 1 : 0;
    for (let seat = first; seat < state.seats; seat++) {
      const id = uid('seat');
      rows.push(
        h(
          'div',
          { class: 'bot-seat' },
          h('label', { for: id, text: t('create.seat_n', { n: seat + 1 }) }),
          h(
            'select',
            {
              id,
              name: `bot-${seat}`,
              dataset: { seat: String(seat) },
              disabled: state.stake > 0,
              onchange: (event) => {
                const bots = { ...state.bots };
                if (event.target.value) bots[seat] = event.target.value;
                else delete bots[seat];
                set({ bots });
              },
            },
            h('option', { value: '', text: t('create.seat_invite'), selected: !state.bots[seat] }),
            h('option', { value: 'easy', text: t('bot.easy'), selected: state.bots[seat] === 'easy' }),
            h('option', { value: 'normal', text: t('bot.normal'), selected: state.bots[seat] === 'normal' }),
            h('option', { value: 'hard', text: t('bot.hard'), selected: state.bots[seat] === 'hard' }),
          ),
        ),
      );
    }
    return rows;
  }

  /** A stake the creator cannot cover would open a table he cannot sit at: said before it opens. */
  function stakeProblem() {
    const me = currentUser();
    if (!me || me.kind !== 'account' || state.stake <= 0) return null; // a guest's stake: the server says no
    const balance = me.balance ?? 0;
    return state.stake > balance ? t('create.stake_above_balance', { balance: formatNumber(balance) }) : null;
  }

  async function submit(event) {
    event.preventDefault();
    if (busy) return;
    errors = {};
    formError = '';
    tooMany = false;
    const problem = stakeProblem();
    if (problem) {
      errors = { stake: problem };
      render();
      const field = root.querySelector('input[name=stake]');
      if (field) field.focus();
      return;
    }
    busy = true;
    const body = {
      preset: state.preset,
      deck: state.deck,
      seats: state.seats,
      circle: state.circle,
      transfer: state.transfer,
      draws: state.draws,
      timer: state.timer,
      stake: state.stake,
      cheating: state.cheating,
      private: state.private,
      chat: state.chat,
      // An empty name gets the placeholder's words in the creator's language (not the server's English).
      name: (state.name.trim() || t('create.name_placeholder', { name: currentUser().name })).slice(0, 40),
      bot_delay_ms: state.bot_delay_ms,
    };
    try {
      const table = await post('/api/tables', body);
      rememberWatchUrl(table.code, table.watch_url);
      const problems = [];
      if (state.join) {
        try {
          await post(`/api/tables/${table.code}/join`, { seat: 0 });
        } catch (failure) {
          problems.push(errorText(failure));
        }
      }
      for (const [seat, level] of Object.entries(state.bots)) {
        try {
          await post(`/api/tables/${table.code}/bots`, { seat: Number(seat), level });
        } catch (failure) {
          problems.push(errorText(failure));
        }
      }
      created = { ...table, problems };
      refreshMe();
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 422) {
        errors = failure.fieldErrors();
        const known = Object.keys(errors).filter((name) => name in state);
        if (known.length < Object.keys(errors).length) formError = t('error.invalid');
      } else if (failure instanceof ApiError && (failure.status === 403 || failure.code === 'insufficient_funds') && state.stake > 0) {
        errors = { stake: errorText(failure) };
      } else if (failure instanceof ApiError && failure.code === 'too_many_tables') {
        formError = t('mytables.too_many');
        tooMany = true;
      } else {
        formError = errorText(failure);
      }
    } finally {
      busy = false;
      render();
      const invalid = root.querySelector('.field.invalid input, .field.invalid select');
      if (invalid) invalid.focus();
    }
  }

  function renderCreated() {
    const go = h('a', { class: 'btn primary big', href: `/t/${encodeURIComponent(created.code)}`, id: 'go-to-table', text: t('create.go_to_table') });
    root.replaceChildren(
      h(
        'div',
        { class: 'page narrow' },
        h('h1', { text: t('create.created_title') }),
        h(
          'section',
          { class: 'panel created', id: 'created' },
          h('p', { text: t('create.share_hint') }),
          linkField(t('create.invite_link'), created.invite_url, 'invite-link', { share: { title: created.table.name, text: t('share.invite_text', { name: created.table.name }) } }),
          linkField(t('create.watch_link'), created.watch_url, 'watch-link'),
          created.problems.length ? h('ul', { class: 'form-error', role: 'alert' }, created.problems.map((text) => h('li', { text }))) : null,
          h('div', { class: 'actions' }, go, h('a', { class: 'btn ghost', href: '/#/', text: t('nav.lobby') })),
        ),
      ),
    );
    go.focus();
  }

  /** Re-render keeping keyboard focus on the same control (by name, and value for radios). */
  function render() {
    if (gone) return;
    const active = document.activeElement;
    const name = active && root.contains(active) ? active.getAttribute('name') : null;
    const value = name && active.type === 'radio' ? active.value : null;
    draw();
    if (name) {
      const selector = value !== null ? `[name="${CSS.escape(name)}"][value="${CSS.escape(value)}"]` : `[name="${CSS.escape(name)}"]`;
      const again = root.querySelector(selector);
      if (again) again.focus();
    }
  }

  function draw() {
    if (created) {
      renderCreated();
      return;
    }
    const me = currentUser();
    const max = MAX_SEATS[state.deck];
    const classic = state.preset === 'classic36';
    const nameInput = h('input', {
      name: 'name',
      maxlength: '40',
      value: state.name,
      placeholder: me ? t('create.name_placeholder', { name: me.name }) : '',
      'aria-labelledby': 'label-name',
      oninput: (event) => {
        state.name = event.target.value;
      },
    });
    const seatsSelect = h(
      'select',
      { name: 'seats', 'aria-labelledby': 'label-seats', 'aria-describedby': 'err-seats', onchange: (event) => set({ seats: Number(event.target.value) }) },
      [2, 3, 4, 5, 6].map((n) =>
        h('option', { value: String(n), selected: state.seats === n, disabled: n > max, text: n > max ? t('create.seats_too_many', { seats: n, deck: state.deck }) : String(n) }),
      ),
    );
    const timerSelect = h(
      'select',
      { name: 'timer', 'aria-labelledby': 'label-timer', onchange: (event) => set({ timer: Number(event.target.value) }) },
      (TIMERS.includes(state.timer) ? TIMERS : [...TIMERS, state.timer].sort((a, b) => a - b)).map((value) =>
        h('option', { value: String(value), selected: state.timer === value, text: value ? t('create.timer_seconds', { seconds: value }) : t('create.timer_off') }),
      ),
    );
    const stakeInput = h('input', {
      name: 'stake',
      type: 'number',
      min: '0',
      step: '1',
      inputmode: 'numeric',
      value: String(state.stake),
      'aria-labelledby': 'label-stake',
      'aria-describedby': 'err-stake',
      max: me && me.kind === 'account' ? String(me.balance ?? 0) : null,
      oninput: (event) => {
        state.stake = Math.max(0, Math.floor(Number(event.target.value) || 0)); // kept over a redraw
      },
      onchange: (event) => {
        set({ stake: Math.max(0, Math.floor(Number(event.target.value) || 0)) });
        const problem = stakeProblem(); // said at once, not only when the form is sent
        if (problem) {
          errors.stake = problem;
          render();
        }
      },
    });
    const paceSelect = h(
      'select',
      { name: 'bot_delay_ms', 'aria-labelledby': 'label-bot_delay_ms', onchange: (event) => set({ bot_delay_ms: Number(event.target.value) }) },
      [
        [0, t('create.pace_instant')],
        [300, t('create.pace_fast')],
        [600, t('create.pace_normal')],
        [1200, t('create.pace_slow')],
      ].map(([value, text]) => h('option', { value: String(value), selected: state.bot_delay_ms === value, text })),
    );
    const guestStake = me && me.kind === 'guest';
    const form = h(
      'form',
      { class: 'form create-form', id: 'create-form', novalidate: true, onsubmit: submit },
      h(
        'fieldset',
        { class: 'panel' },
        h('legend', { text: t('create.rules') }),
        fieldBox('preset', t('create.preset'), presetPicker()),
        fieldBox('name', t('create.name'), nameInput),
        fieldBox('deck', t('create.deck'), radios('deck', [[24, t('create.deck_n', { count: 24 })], [36, t('create.deck_n', { count: 36 })], [52, t('create.deck_n', { count: 52 })]], state.deck, { disabled: (value) => classic && value !== 36 })),
        fieldBox('seats', t('create.seats'), seatsSelect, t('create.seats_hint', { deck: state.deck, max })),
        fieldBox('circle', t('create.circle'), radios('circle', [['all', t('rules.circle_all')], ['neighbours', t('rules.circle_neighbours')]], state.circle)),
        h(
          'div',
          { class: 'check-grid' },
          checkbox('transfer', t('create.transfer'), { disabled: classic, hint: classic ? t('create.classic_fixed') : t('create.transfer_hint') }),
          checkbox('draws', t('create.draws'), { disabled: classic, hint: t('create.draws_hint') }),
          checkbox('cheating', t('create.cheating'), { hint: t('create.cheating_hint') }),
          checkbox('private', t('create.private'), { hint: t('create.private_hint') }),
          checkbox('chat', t('create.chat'), { hint: t('create.chat_hint') }),
        ),
        fieldBox('timer', t('create.timer'), timerSelect),
        fieldBox('stake', t('create.stake'), stakeInput, guestStake ? t('create.stake_guest_hint') : me ? `${t('create.stake_hint')} ${t('create.balance_hint', { coins: formatNumber(me.balance ?? 0) })}` : t('create.stake_hint')),
      ),
      h(
        'fieldset',
        { class: 'panel' },
        h('legend', { text: t('create.players') }),
        checkbox('join', t('create.join_myself')),
        h('p', { class: 'hint', text: state.stake > 0 ? t('create.bots_free_only') : t('create.bots_hint') }),
        h('div', { class: 'bot-seats' }, botSeats()),
        fieldBox('bot_delay_ms', t('create.pace'), paceSelect),
      ),
      formError ? h('p', { class: 'form-error', role: 'alert', id: 'create-error', text: formError }) : null,
      tooMany ? h('p', {}, h('a', { class: 'btn', href: '/#/', id: 'to-my-tables', text: t('mytables.title') })) : null,
      h('div', { class: 'actions' }, h('button', { class: 'btn primary big', type: 'submit', id: 'create-submit', disabled: busy, text: t('create.submit') })),
    );
    root.replaceChildren(
      h(
        'div',
        { class: 'page narrow' },
        h('h1', { text: t('create.title') }),
        me ? null : h('div', {}, h('p', { class: 'notice', text: t('create.sign_in_first') }), authPanel({ onDone: () => render() })),
        me ? form : null,
      ),
    );
  }

  /** The same player's coins changed: the stake's limit and hint, in place (the form stays as typed). */
  function coinsChanged(me) {
    const stake = root.querySelector('input[name=stake]');
    if (!stake || !me || me.kind !== 'account') return;
    stake.max = String(me.balance ?? 0);
    const hint = root.querySelector('[data-field=stake] .hint');
    if (hint) hint.textContent = `${t('create.stake_hint')} ${t('create.balance_hint', { coins: formatNumber(me.balance ?? 0) })}`;
  }

  render();
  const off = onUserChange((me, change) => (change.signIn ? render() : coinsChanged(me)));
  return {
    relabel: render,
    unmount: () => {
      gone = true;
      off();
    },
  };
}
