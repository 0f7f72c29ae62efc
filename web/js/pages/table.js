// The play table (/t/<code>) and the spectator view (/w/<code>).
import { codeText, del, errorText, post } from '../api.js';
import { cardFace, cardName, cardShort, sortHand } from '../cards.js';
import { linkField, watchUrlFor } from '../copy.js';
import { h, replaceKeepingFocus } from '../dom.js';
import { isClientSeed, newClientSeed } from '../fairness.js';
import { formatNumber, formatSigned, t } from '../i18n.js';
import { rulesChips } from '../rules.js';
import { currentUser, onUserChange, playAsGuest, refreshMe, suggestedGuestName } from '../session.js';
import { toast } from '../toast.js';
import { botLevelText, clockText, countdownText, displayName, eventText, moveText, reasonText, seatName, seatNames } from '../table/describe.js';
import { discardPile, guestBadge, pairsZone, seatBox, stockPile } from '../table/render.js';
import { TableSocket } from '../table/socket.js';

const LOG_LIMIT = 120;
const CARD_ACTIONS = ['lead', 'throw_in', 'transfer', 'cover'];

/** Legal actions (view.legal) that use `card`. */
export function actionsForCard(legal, card) {
  return legal.filter((action) => action.card === card || (action.cards && action.cards.includes(card)));
}

function sameCards(a, b) {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

export function mount(root, { code, watch }) {
  const st = {
    code,
    watch,
    version: -1,
    seat: null,
    view: null,
    table: null,
    you: null,
    conn: 'connecting',
    gone: false,
    log: [],
    boutAttacks: [],
    selection: [],
    busy: null,
    busyTimer: null,
    deadlineAt: null,
    windowTotal: null, // ms of the open challenge window (cheating tables), for the timer bar
    seatDeadlines: {}, // seat -> {at, kind}: when its decision runs out (performance.now() time), and why
    rematchAt: null,
    seenTable: new Set(),
    seenHand: new Set(),
    lastStatus: null,
    joinError: '',
    // Provably fair deals (docs/fairness.md): this browser's seed for the next deal, sent once the
    // table's commitment is known; a fresh random one for every commitment unless the player typed one.
    clientSeed: newClientSeed(),
    ownSeed: false,
    seedFor: null, // the commitment the seed was made for
    seedSentFor: null,
    seedIds: new Set(),
    guestName: suggestedGuestName(t('auth.guest_name_prefix')),
  };
  const socket = new TableSocket(code, { onMessage, onState });
  const container = h('div', { class: 'page table-page', id: 'table-page' });
  root.replaceChildren(container);

  // ------------------------------------------------------------------ incoming

  function onState(state) {
    st.conn = state;
    if (state === 'gone') st.gone = true;
    render();
  }

  function names() {
    return seatNames(st.table ? st.table.seats : []);
  }

  function addLog(events) {
    const seatNames = names();
    for (const event of events) {
      if (event.type === 'bout_start' || event.type === 'bout_end' || event.type === 'match_start') st.boutAttacks = [];
      // Keep the event and what it refers to; the words are made at render time (language switch).
      st.log.push({ event, names: seatNames, attacks: st.boutAttacks.slice() });
      if (event.type === 'move' && event.action && event.action.type !== 'cover') st.boutAttacks.push(...(event.action.cards || []));
    }
    if (st.log.length > LOG_LIMIT) st.log.splice(0, st.log.length - LOG_LIMIT);
  }

  function onMessage(message) {
    switch (message.type) {
      case 'welcome':
      case 'update': {
        if (message.version < st.version) return;
        const before = st.table ? st.table.status : null;
        st.version = message.version;
        st.seat = message.seat ?? null;
        st.view = message.view;
        st.table = message.table;
        if (message.table && message.table.you) st.you = message.table.you;
        if (message.events && message.events.length) addLog(message.events);
        if (message.type === 'welcome' && message.resumed_from === undefined && st.log.length === 0) {
          st.boutAttacks = st.view ? st.view.table.map((pair) => pair.attack) : [];
        }
        readDeadlines(message.table);
        const inWindow = Boolean(st.view && st.view.phase === 'challenge');
        if (!inWindow) st.windowTotal = null;
        else if (st.windowTotal === null) st.windowTotal = message.table.deadline_ms;
        if (message.type === 'update' && message.events && message.events.length) clearBusy();
        if (st.selection.length && !st.selection.every((card) => st.view && st.view.hand && st.view.hand.includes(card))) st.selection = [];
        const status = st.table.status;
        if (before !== status) onStatusChange(before, status);
        sendClientSeed();
        render();
        break;
      }
      case 'presence':
        // Someone connected or left: the same version, new table facts (who is online, spectators).
        if (message.version < st.version || !message.table) return;
        st.table = message.table;
        st.deadlineAt = message.table.deadline_ms !== null && message.table.deadline_ms !== undefined ? performance.now() + message.table.deadline_ms : null;
        render();
        break;
      case 'ack':
        if (message.id === st.busy) clearBusy();
        render();
        break;
      case 'error':
        if (st.seedIds.has(message.id)) {
          st.seedSentFor = null; // e.g. the match started meanwhile: the next commitment gets one
          break;
        }
        if (!message.id || message.id === st.busy) clearBusy();
        toast(errorTextFor(message), 'error');
        render();
        break;
      case 'bye':
        if (message.code === 'signed_out') {
          toast(t('table.signed_out'), 'info');
          refreshMe(); // the header then shows the signed-out state
        } else if (message.code === 'shutdown') {
          toast(t('table.server_restarting'), 'info');
        } else {
          toast(codeText(message.code) || message.message, 'info');
        }
        break;
      default:
        break;
    }
  }

  /** After the table's commitment, and only between matches: this seat's client seed, naming it. */
  function sendClientSeed() {
    const fair = st.table && st.table.fairness;
    if (!fair || watch || st.seat === null || st.table.status === 'playing') return;
    if (st.seedFor !== fair.commitment) {
      if (!st.ownSeed) st.clientSeed = newClientSeed();
      st.seedFor = fair.commitment;
    }
    if (st.seedSentFor === fair.commitment) return;
    const id = socket.command('client_seed', { seed: st.clientSeed, commitment: fair.commitment });
    if (id) {
      st.seedIds.add(id);
      st.seedSentFor = fair.commitment;
    }
  }

  function fairnessLine() {
    const fair = st.table && st.table.fairness;
    if (!fair) return null;
    const short = `${fair.commitment.slice(0, 8)}…${fair.commitment.slice(-8)}`;
    const parts = [h('span', { text: t('fair.commitment', { number: fair.match_number }) }), ' ', h('code', { class: 'commitment', id: 'fair-commitment', title: fair.commitment, text: short })];
    if (st.seat !== null && !watch && st.table.status !== 'playing') {
      parts.push(
        h(
          'label',
          { class: 'field inline seed-field' },
          h('span', { class: 'field-label', text: t('fair.your_seed') }),
          h('input', {
            id: 'client-seed',
            value: st.clientSeed,
            maxlength: '32',
            spellcheck: 'false',
            'aria-describedby': 'fair-seed-state',
            onchange: (event) => {
              const value = event.target.value.trim().toLowerCase();
              if (!isClientSeed(value)) {
                toast(t('fair.bad_seed'), 'error');
                event.target.value = st.clientSeed;
                return;
              }
              st.clientSeed = value;
              st.ownSeed = true;
              st.seedSentFor = null;
              sendClientSeed();
              render();
            },
          }),
        ),
        h('span', { class: 'muted', id: 'fair-seed-state', text: st.seedSentFor === fair.commitment ? t('fair.seed_sent') : t('fair.seed_pending') }),
      );
    }
    return h('p', { class: 'fair-line hint', id: 'fair-line' }, parts);
  }

  /** The table's deadlines (milliseconds left when it was sent) as moments on this page's clock. */
  function readDeadlines(table) {
    const now = performance.now();
    const known = (ms) => ms !== null && ms !== undefined;
    st.deadlineAt = table && known(table.deadline_ms) ? now + table.deadline_ms : null;
    st.seatDeadlines = {};
    for (const seat of (table && table.seats) || []) {
      if (known(seat.deadline_ms)) st.seatDeadlines[seat.seat] = { at: now + seat.deadline_ms, kind: seat.deadline_kind || 'timer' };
    }
    st.rematchAt = table && table.rematch ? now + table.rematch.deadline_ms : null;
  }

  /** When seat `seat`'s decision runs out, and why ('timer', 'idle', 'grace'), or null. */
  function deadlineOf(seat) {
    if (st.seatDeadlines[seat]) return st.seatDeadlines[seat];
    return st.deadlineAt === null ? null : { at: st.deadlineAt, kind: 'timer' };
  }

  function errorTextFor(message) {
    return codeText(message.code) || `${t('error.generic')} (${message.message})`;
  }

  function onStatusChange(before, status) {
    st.lastStatus = status;
    const me = currentUser();
    if (!me || me.kind !== 'account' || st.seat === null) return;
    if (status === 'playing' && st.table.rules.stake > 0) refreshMe();
    if (status === 'finished' && before !== null) {
      // The ledger settles a moment after the result: look a few times.
      for (const delay of [200, 700, 1500, 3000, 6000]) setTimeout(refreshMe, delay);
    }
  }

  function clearBusy() {
    st.busy = null;
    clearTimeout(st.busyTimer);
  }

  // ------------------------------------------------------------------ outgoing

  function send(action) {
    if (st.busy || st.conn !== 'open') return;
    const fields = {};
    if (action.type === 'cover') Object.assign(fields, { attack: action.attack, card: action.card });
    if (action.cards) fields.cards = action.cards;
    if (action.type === 'challenge') fields.move = action.move;
    const id = socket.command(action.type, fields);
    if (!id) return;
    st.busy = id;
    st.selection = [];
    clearTimeout(st.busyTimer);
    st.busyTimer = setTimeout(() => {
      st.busy = null;
      render();
    }, 4000);
    render();
  }

  function legal() {
    return (st.view && st.view.legal) || [];
  }

  function onCardClick(card) {
    if (st.busy) return;
    const actions = actionsForCard(legal(), card);
    if (st.selection.includes(card)) {
      st.selection = st.selection.filter((c) => c !== card);
      render();
      return;
    }
    if (st.selection.length) {
      const wanted = [...st.selection, card];
      const grows = legal().some((action) => action.cards && wanted.every((c) => action.cards.includes(c)));
      if (grows) {
        st.selection = wanted;
        render();
        return;
      }
    }
    if (!actions.length) {
      toast(t('table.cannot_play_card', { card: cardName(card) }));
      return;
    }
    const single = actions.filter((action) => action.card || action.cards.length === 1);
    if (actions.length === 1 && single.length === 1) {
      send(actions[0]);
      return;
    }
    st.selection = [card];
    render();
  }

  function onDrop(card, attackIndex) {
    if (!card) return;
    const actions = actionsForCard(legal(), card);
    let action = null;
    if (attackIndex !== null) action = actions.find((a) => a.type === 'cover' && a.attack === attackIndex);
    else {
      const plays = actions.filter((a) => a.cards && a.cards.length === 1);
      action = plays.find((a) => a.type === 'transfer') || plays[0] || (actions.length === 1 ? actions[0] : null);
    }
    if (action) send(action);
    else onCardClick(card);
  }

  function selectionActions() {
    if (!st.selection.length) return [];
    return legal().filter((action) => action.cards && sameCards(action.cards, st.selection));
  }

  async function join(seat) {
    st.joinError = '';
    try {
      const body = seat === undefined ? {} : { seat };
      const fair = st.table && st.table.fairness;
      if (fair && !watch && st.table.status !== 'playing') {
        // Sitting down may fill the table and start the match at once: the seed goes along.
        if (st.seedFor !== fair.commitment) {
          if (!st.ownSeed) st.clientSeed = newClientSeed();
          st.seedFor = fair.commitment;
        }
        Object.assign(body, { client_seed: st.clientSeed, commitment: fair.commitment });
      }
      await post(`/api/tables/${encodeURIComponent(code)}/join`, body);
      if (fair) st.seedSentFor = fair.commitment;
      refreshMe();
    } catch (failure) {
      st.joinError = errorText(failure);
    }
    render();
  }

  async function joinAsGuest(event) {
    event.preventDefault();
    const input = event.target.querySelector('input[name=guest-name]');
    st.guestName = input.value.trim();
    st.joinError = '';
    try {
      await playAsGuest(st.guestName);
      await post(`/api/tables/${encodeURIComponent(code)}/join`, {});
    } catch (failure) {
      const fields = failure.fieldErrors ? failure.fieldErrors() : {};
      st.joinError = fields.name ? t('auth.bad_name') : errorText(failure);
    }
    socket.reconnectNow(); // the new session cookie identifies us at the handshake
    render();
  }

  async function tableCall(path, body) {
    try {
      await post(`/api/tables/${encodeURIComponent(code)}/${path}`, body);
    } catch (failure) {
      toast(errorText(failure), 'error');
    }
  }

  function leave() {
    const playing = st.table && st.table.status === 'playing';
    if (playing && !window.confirm(t('table.leave_confirm'))) return;
    tableCall('leave', {}).then(refreshMe);
  }

  // ------------------------------------------------------------------ rendering

  function isCreator() {
    return st.table && st.you && st.table.creator === st.you;
  }

  function connText(state) {
    if (state === 'gone') return t('table.gone');
    if (state === 'signed_out') return t('table.signed_out');
    return state === 'reconnecting' ? t('table.reconnecting') : t('table.connecting');
  }

  function topBar() {
    const table = st.table;
    const spectating = st.seat === null;
    const connBadge =
      st.conn === 'open'
        ? null
        : h('span', { class: ['badge', 'conn-state', st.conn], id: 'conn-state', role: 'status', text: connText(st.conn) });
    return h(
      'div',
      { class: 'table-top' },
      h(
        'div',
        { class: 'table-title' },
        h('h1', { text: table ? table.name : t('common.loading') }),
        spectating && table ? h('span', { class: 'badge spectating', id: 'spectating-badge', text: t('table.spectating') }) : null,
        table
          ? h('span', { class: 'badge spectators', id: 'spectator-count', dataset: { count: String(table.spectators) }, 'aria-label': t('table.spectators_n', { count: table.spectators }) }, h('span', { class: 'eye', 'aria-hidden': 'true' }), h('span', { text: String(table.spectators) }))
          : null,
        connBadge,
      ),
      table ? rulesChips(table.rules) : null,
      table ? seriesLine() : null,
    );
  }

  function seriesLine() {
    const entries = Object.entries(st.table.series || {});
    const played = entries.some(([, score]) => score[0] || score[1]);
    if (!played) return null;
    const seatNames = names();
    return h(
      'p',
      { class: 'series-line', id: 'series' },
      h('span', { class: 'muted', text: `${t('table.series')}: ` }),
      entries.map(([seat, score], i) => [i ? ' · ' : '', h('span', { text: t('table.series_entry', { name: seatName(seatNames, Number(seat)), wins: score[0], losses: score[1] }) })]),
    );
  }

  function decidingSeats() {
    return st.view && st.table && st.table.status === 'playing' ? st.view.decision.seats : [];
  }

  function seatsRow() {
    const table = st.table;
    const view = st.view;
    const n = table.seats.length;
    const order = [];
    if (st.seat !== null) for (let i = 1; i < n; i++) order.push((st.seat + i) % n);
    else for (let i = 0; i < n; i++) order.push(i);
    const deciding = decidingSeats();
    return h(
      'div',
      { class: 'opponents', id: 'opponents' },
      order.map((i) =>
        seatBox(table.seats[i], view ? view.players[i] : null, { deciding: deciding.includes(i), series: null }),
      ),
    );
  }

  function promptText() {
    const view = st.view;
    if (!view || view.phase === 'over') return '';
    const seatNames = names();
    const decision = view.decision;
    const mine = st.seat !== null && decision.seats.includes(st.seat);
    const who = decision.seats.map((seat) => seatName(seatNames, seat)).join(', ');
    switch (decision.kind) {
      case 'lead':
        return mine ? t('prompt.you_lead') : t('prompt.other_leads', { name: who });
      case 'defend':
        return mine ? t('prompt.you_defend') : t('prompt.other_defends', { name: who });
      case 'throw_in':
        return mine ? t('prompt.you_throw_in') : t('prompt.others_throw_in', { names: who });
      case 'throw_in_after_take':
        return mine ? t('prompt.you_add_to_take', { name: seatName(seatNames, view.defender) }) : t('prompt.others_add_to_take', { name: seatName(seatNames, view.defender), names: who });
      case 'challenge':
        return mine ? t('prompt.you_challenge_window') : t('prompt.others_challenge_window', { names: who });
      default:
        return '';
    }
  }

  function center() {
    const view = st.view;
    const selected = st.selection.length === 1 ? st.selection[0] : null;
    const targets = selected ? legal().filter((a) => a.type === 'cover' && a.card === selected).map((a) => a.attack) : [];
    const zone = pairsZone(view, { targets, onTarget: (index) => send({ type: 'cover', attack: index, card: selected }), seen: st.seenTable, onDrop: st.seat !== null ? onDrop : null });
    st.seenTable = new Set(view.table.flatMap((pair) => [pair.attack, pair.cover].filter(Boolean)));
    const info = [];
    if (view.phase !== 'over' && view.phase !== 'challenge') {
      info.push(h('span', { class: 'allowance', id: 'allowance', dataset: { allowance: String(view.allowance) }, text: t('table.allowance', { count: view.allowance, cap: view.cap }) }));
      if (view.taking) info.push(h('span', { class: 'badge taking', text: t('table.taking', { name: seatName(names(), view.defender) }) }));
    }
    return h(
      'div',
      { class: 'center' },
      h('div', { class: 'piles' }, stockPile(view), discardPile(view)),
      zone,
      h('div', { class: 'table-info' }, info, h('p', { class: 'prompt', id: 'prompt', 'aria-live': 'polite', text: promptText() }), deadlineNote()),
    );
  }

  /** "Bob is not connected: 0:42 to come back", "Your move: 4:59 left, then you forfeit": the
   * idle limit and the disconnect grace of the seat the match waits for (the move timer has its bar). */
  function deadlineNote() {
    const seat = decidingSeats().map((s) => ({ seat: s, deadline: deadlineOf(s) })).find((entry) => entry.deadline && entry.deadline.kind !== 'timer');
    if (!seat) return null;
    return h('p', { class: ['deadline-note', `deadline-${seat.deadline.kind}`], id: 'deadline-note', dataset: { seat: String(seat.seat), kind: seat.deadline.kind } });
  }

  function deadlineNoteText(seat, kind, left) {
    const time = clockText(left);
    const name = seatName(names(), seat);
    if (kind === 'grace') return t('deadline.grace', { name, time });
    return seat === st.seat ? t('deadline.idle_you', { time }) : t('deadline.idle_other', { name, time });
  }

  function actionBar() {
    const actions = legal();
    const buttons = [];
    const has = (type) => actions.find((a) => a.type === type);
    const view = st.view;
    const disabled = Boolean(st.busy) || st.conn !== 'open';
    const button = (key, text, onclick, extra = 'secondary') =>
      h('button', { type: 'button', class: ['btn', extra], dataset: { action: key, key: `act:${key}` }, disabled, onclick, text });
    const group = selectionActions();
    // The selected card(s) as a lead or throw-in (a card with several uses is selected, not played).
    for (const action of group) {
      if (action.type === 'transfer') continue;
      buttons.push(button('play', t('action.play_selected', { count: st.selection.length }), () => send(action), 'primary'));
    }
    const transfers = actions.filter((a) => a.type === 'transfer');
    if (transfers.length) {
      buttons.push(
        button('transfer', t('action.transfer'), () => {
          const chosen = group.find((a) => a.type === 'transfer') || (transfers.length === 1 ? transfers[0] : null);
          if (chosen) send(chosen);
          else toast(t('action.transfer_pick'));
        }),
      );
    }
    if (has('take')) buttons.push(button('take', t('action.take'), () => send(has('take')), 'danger'));
    if (has('pass')) {
      const allCovered = view.table.length && view.table.every((pair) => pair.cover);
      const label = view.phase === 'challenge' ? t('action.no_challenge') : view.taking ? t('action.done_adding') : allCovered ? t('action.bito') : t('action.pass');
      buttons.push(button('pass', label, () => send(has('pass')), 'primary'));
    }
    if (has('exchange_trump')) buttons.push(button('exchange_trump', t('action.exchange_trump', { card: cardShort(view.trump_card) }), () => send(has('exchange_trump'))));
    const challenges = actions.filter((a) => a.type === 'challenge');
    let challengeMenu = null;
    if (challenges.length) {
      const attacks = [];
      const seatNames = names();
      const described = view.moves.map((move) => {
        const text = moveText(move, seatNames, attacks);
        if (move.type !== 'cover') attacks.push(...(move.cards || []));
        return text;
      });
      challengeMenu = h(
        'details',
        { class: 'challenge-menu' },
        h('summary', { class: 'btn warn', dataset: { action: 'challenge', key: 'act:challenge' }, text: t('action.challenge') }),
        h(
          'div',
          { class: 'challenge-list' },
          h('p', { class: 'hint', text: t('action.challenge_hint') }),
          challenges.map((action) =>
            h('button', { type: 'button', class: 'btn small warn', dataset: { key: `challenge:${action.move}` }, disabled, onclick: () => send(action), text: described[action.move] || `#${action.move}` }),
          ),
        ),
      );
    }
    if (st.selection.length) buttons.push(button('clear', t('action.clear_selection'), () => { st.selection = []; render(); }, 'ghost'));
    return h('div', { class: 'action-bar', id: 'actions', role: 'group', 'aria-label': t('action.label') }, buttons, challengeMenu);
  }

  function handRow() {
    const view = st.view;
    const hand = sortHand(view.hand || [], view.trump);
    const actions = legal();
    const canAct = !st.busy && st.conn === 'open';
    const previous = st.seenHand;
    st.seenHand = new Set(hand);
    const cards = hand.map((card) => {
      const playable = actions.some((a) => a.card === card || (a.cards && a.cards.includes(card)));
      const selected = st.selection.includes(card);
      const el = cardFace(card, {
        tag: 'button',
        classes: [playable && canAct && 'playable', selected && 'selected', card.endsWith(view.trump) && 'trump', previous.size && !previous.has(card) && 'enter'],
        attrs: {
          dataset: { key: `card:${card}` },
          'aria-pressed': selected ? 'true' : 'false',
          'aria-disabled': playable && canAct ? 'false' : 'true',
          draggable: playable && canAct ? 'true' : 'false',
          onclick: () => onCardClick(card),
          ondragstart: (event) => {
            event.dataTransfer.setData('text/plain', card);
            event.dataTransfer.effectAllowed = 'move';
            container.classList.add('dragging');
          },
          ondragend: () => container.classList.remove('dragging'),
        },
      });
      return el;
    });
    return h('div', { class: 'hand', id: 'hand', role: 'group', 'aria-label': t('table.your_hand', { count: hand.length }) }, cards);
  }

  function myArea() {
    const table = st.table;
    const view = st.view;
    const mine = table.seats[st.seat];
    const deciding = decidingSeats().includes(st.seat);
    return h(
      'div',
      { class: ['me-area', deciding && 'my-turn'] },
      h(
        'div',
        { class: 'me-row' },
        seatBox(mine, view ? view.players[st.seat] : null, { me: true, deciding }),
        view && view.phase !== 'over' ? actionBar() : null,
        table.status === 'playing' && view && !view.players[st.seat].out
          ? h('button', { type: 'button', class: 'btn small ghost leave', id: 'leave-button', onclick: leave, text: t('table.leave') })
          : null,
      ),
      view ? handRow() : null,
    );
  }

  function waitingPanel() {
    const table = st.table;
    const me = currentUser();
    const seated = table.seats.filter((seat) => seat.kind !== 'empty').length;
    const creator = isCreator();
    const stake = table.rules.stake;
    const canSit = !watch && st.seat === null && table.status !== 'playing' && table.seats.some((seat) => seat.kind === 'empty');
    const children = [h('h2', { text: t('waiting.title', { seated, seats: table.seats.length }) })];
    children.push(
      h(
        'ul',
        { class: 'seat-list' },
        table.seats.map((seat) =>
          h(
            'li',
            { class: ['seat-line', seat.kind], dataset: { seat: String(seat.seat) } },
            h('span', { class: 'seat-no', text: t('table.seat_n', { n: seat.seat + 1 }) }),
            seat.kind === 'human' ? h('span', { class: ['conn', seat.connected ? 'online' : 'offline'], role: 'img', 'aria-label': seat.connected ? t('table.online') : t('table.offline'), title: seat.connected ? t('table.online') : t('table.offline') }) : null,
            h('span', { class: 'seat-who', text: seat.kind === 'empty' ? t('table.free_seat') : displayName(seat) }),
            guestBadge(seat),
            seat.kind === 'empty' && canSit && me && !(stake > 0 && me.kind === 'guest')
              ? h('button', { type: 'button', class: 'btn small primary', dataset: { key: `sit:${seat.seat}`, action: 'sit' }, onclick: () => join(seat.seat), text: t('waiting.sit_here') })
              : null,
            seat.kind === 'empty' && creator && stake === 0 && table.status !== 'playing'
              ? h(
                  'span',
                  { class: 'bot-add' },
                  ['easy', 'normal', 'hard'].map((level) =>
                    h('button', { type: 'button', class: 'btn small ghost', dataset: { key: `bot:${seat.seat}:${level}`, bot: level }, onclick: () => tableCall('bots', { seat: seat.seat, level }), text: t('waiting.add_bot', { level: botLevelText(level) }) }),
                  ),
                )
              : null,
            seat.kind === 'bot' && creator && table.status !== 'playing'
              ? h('button', { type: 'button', class: 'btn small ghost', onclick: () => del(`/api/tables/${encodeURIComponent(code)}/bots/${seat.seat}`).catch((failure) => toast(errorText(failure), 'error')), text: t('waiting.remove_bot') })
              : null,
          ),
        ),
      ),
    );
    if (!watch && st.seat === null && canSit) {
      if (!me) {
        children.push(
          h(
            'form',
            { class: 'form guest-join', id: 'guest-join', onsubmit: joinAsGuest },
            h(
              'label',
              { class: 'field' },
              h('span', { class: 'field-label', text: t('waiting.guest_name') }),
              h('input', { name: 'guest-name', required: true, minlength: '2', maxlength: '24', pattern: '[A-Za-z0-9_\\-]+', autocomplete: 'nickname', value: st.guestName }),
            ),
            stake > 0 ? h('p', { class: 'notice', text: t('waiting.staked_needs_account') }) : null,
            h('button', { type: 'submit', class: 'btn primary big', id: 'guest-join-button', disabled: stake > 0, text: t('waiting.join_as_guest') }),
            h('p', { class: 'hint' }, h('a', { href: `/#/login?next=${encodeURIComponent(location.pathname)}`, text: t('waiting.or_sign_in') })),
          ),
        );
      } else if (stake > 0 && me.kind === 'guest') {
        children.push(h('p', { class: 'notice', text: t('waiting.staked_needs_account') }));
      } else {
        children.push(h('button', { type: 'button', class: 'btn primary big', id: 'join-button', dataset: { key: 'join' }, onclick: () => join(undefined), text: stake > 0 ? t('waiting.join_staked', { coins: formatNumber(stake) }) : t('waiting.join') }));
      }
    }
    if (st.joinError) children.push(h('p', { class: 'form-error', role: 'alert', id: 'join-error', text: st.joinError }));
    if (creator && seated >= 2 && seated < table.seats.length) {
      children.push(h('button', { type: 'button', class: 'btn secondary', id: 'start-button', onclick: () => tableCall('start', {}), text: t('waiting.start_now', { count: seated }) }));
    }
    if (!watch) {
      const links = [linkField(t('create.invite_link'), `${location.origin}/t/${code}`, 'invite-link')];
      const watchUrl = watchUrlFor(code);
      if (watchUrl) links.push(linkField(t('create.watch_link'), watchUrl, 'watch-link'));
      children.push(h('div', { class: 'share' }, links));
    }
    if (st.seat !== null) children.push(h('button', { type: 'button', class: 'btn ghost', id: 'leave-button', onclick: leave, text: t('table.leave') }));
    children.push(fairnessLine());
    return h('section', { class: 'panel waiting', id: 'waiting' }, children);
  }

  function resultsPanel() {
    const table = st.table;
    const results = table.results;
    if (!results) return null;
    const outcome = results.outcome;
    const seatNames = names();
    const changes = results.coin_changes || {};
    const stake = table.rules.stake;
    let title;
    if (outcome.draw) title = t('results.draw');
    else if (st.seat !== null && outcome.durak === st.seat) title = t('results.you_durak');
    else if (st.seat !== null && outcome.places[0] && outcome.places[0].includes(st.seat)) title = t('results.you_won');
    else if (st.seat !== null) title = t('results.you_safe');
    else title = t('results.durak_is', { name: seatName(seatNames, outcome.durak) });
    let place = 1;
    const rows = [];
    for (const group of outcome.places) {
      for (const seat of group) {
        const change = Number(changes[seat] ?? changes[String(seat)] ?? 0);
        const durak = !outcome.draw && seat === outcome.durak;
        rows.push(
          h(
            'li',
            { class: ['result-row', durak && 'durak', seat === st.seat && 'me'], dataset: { seat: String(seat) } },
            h('span', { class: 'place', text: durak ? t('results.durak') : t('results.place', { place }) }),
            h('span', { class: 'who', text: seatName(seatNames, seat) }),
            stake > 0 ? h('span', { class: ['coins', change > 0 ? 'up' : change < 0 ? 'down' : 'even'], dataset: { change: String(change) }, text: t('results.coins', { change: formatSigned(change) }) }) : null,
          ),
        );
      }
      place += group.length;
    }
    const reason = outcome.forfeit !== null && outcome.forfeit !== undefined ? h('p', { class: 'notice', text: t('results.forfeit', { name: seatName(seatNames, outcome.forfeit), reason: reasonText(outcome.reason) }) }) : null;
    const series = Object.entries(table.series || {});
    st.resultsShown = results.match_id; // animate its arrival once, not on every later update
    return h(
      'section',
      { class: ['panel', 'results', st.resultsShown !== results.match_id && 'appear'], id: 'results', role: 'region', 'aria-label': t('results.title'), tabindex: '-1' },
      h('h2', { class: 'results-title', text: title }),
      h('ol', { class: 'result-list' }, rows),
      reason,
      rematchLine(),
      fairnessLine(),
      series.length
        ? h(
            'div',
            { class: 'series-table' },
            h('h3', { text: t('table.series') }),
            h(
              'ul',
              {},
              series.map(([seat, score]) => h('li', { dataset: { seat } }, h('span', { text: seatName(seatNames, Number(seat)) }), h('b', { text: t('results.series_score', { wins: score[0], losses: score[1] }) }))),
            ),
          )
        : null,
      h(
        'div',
        { class: 'actions' },
        rematchButtons(),
        results.match_id ? h('a', { class: 'btn ghost', href: `/#/replay/${encodeURIComponent(results.match_id)}`, text: t('results.replay') }) : null,
        h('a', { class: 'btn ghost', href: '/#/', text: t('nav.lobby') }),
      ),
    );
  }

  // A rematch is a proposal: the first click opens it, each player agrees with his own click, and
  // it starts (and takes the stakes) when all have agreed; Leave declines (docs/protocol.md).

  function rematchLine() {
    const proposal = st.table.rematch;
    if (!proposal) return null;
    const seatNames = names();
    const agreed = proposal.agreed;
    const mine = st.seat !== null && agreed.includes(st.seat);
    let text;
    if (mine) {
      const missing = st.table.seats.filter((seat) => !agreed.includes(seat.seat)).map((seat) => (seat.kind === 'empty' ? t('rematch.new_player') : seatName(seatNames, seat.seat)));
      text = t('rematch.waiting_for', { names: missing.join(', ') });
    } else {
      const askers = st.table.seats.filter((seat) => seat.kind === 'human' && agreed.includes(seat.seat)).map((seat) => seatName(seatNames, seat.seat));
      text = t('rematch.wants', { names: askers.join(', ') });
    }
    return h(
      'p',
      { class: 'notice rematch-line', id: 'rematch-status', role: 'status', dataset: { agreed: agreed.join(',') } },
      h('span', { text }),
      ' ',
      h('span', { class: 'rematch-countdown', id: 'rematch-countdown' }),
    );
  }

  function rematchButtons() {
    const proposal = st.table.rematch;
    if (st.seat === null) {
      // A seat freed during the proposal is open to anyone watching: sitting down is agreeing.
      const me = currentUser();
      const stake = st.table.rules.stake;
      const free = st.table.seats.some((seat) => seat.kind === 'empty');
      if (watch || !proposal || !free || !me || (stake > 0 && me.kind === 'guest')) return null;
      return h('button', { type: 'button', class: 'btn primary', id: 'rematch-join', dataset: { key: 'rematch-join' }, onclick: () => join(undefined), text: stake > 0 ? t('waiting.join_staked', { coins: formatNumber(stake) }) : t('waiting.join') });
    }
    const agreed = proposal ? proposal.agreed.includes(st.seat) : false;
    const leaveButton = h('button', { type: 'button', class: 'btn ghost', id: 'rematch-leave', dataset: { key: 'rematch-leave' }, onclick: () => tableCall('leave', {}).then(refreshMe), text: t('rematch.leave') });
    if (agreed) return leaveButton;
    const text = proposal ? t('rematch.play_again') : t('results.rematch');
    return [h('button', { type: 'button', class: 'btn primary', id: 'rematch-button', dataset: { key: 'rematch' }, onclick: () => tableCall('rematch', {}), text }), proposal ? leaveButton : null];
  }

  function logPanel() {
    const items = st.log
      .map((entry) => [entry.event.type, eventText(entry.event, entry.names, entry.attacks)])
      .filter(([, text]) => text)
      .slice(-40)
      .map(([type, text]) => h('li', { class: `log-${type}`, text }));
    const list = h('ol', { class: 'log-list', id: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': t('table.log') }, items);
    return h('details', { class: 'panel log-panel', open: window.innerWidth > 700 }, h('summary', { text: t('table.log') }), list);
  }

  function render() {
    if (st.gone) {
      replaceKeepingFocus(container, [h('section', { class: 'panel narrow' }, h('h1', { text: t('table.gone_title') }), h('p', { text: t('table.gone') }), h('a', { class: 'btn primary', href: '/#/', text: t('nav.lobby') }))]);
      return;
    }
    if (!st.table) {
      replaceKeepingFocus(container, [topBar(), h('p', { class: 'muted', text: t('common.loading') })]);
      return;
    }
    const view = st.view;
    const status = st.table.status;
    const felt = h(
      'section',
      { class: ['felt', status === 'finished' && 'finished'], id: 'felt', 'aria-label': t('table.felt'), dataset: { version: String(st.version), status, phase: view ? view.phase : 'none' } },
      view ? seatsRow() : null,
      view ? center() : waitingPanel(),
      st.seat !== null ? myArea() : null,
    );
    const logOpen = container.querySelector('.log-panel');
    const log = logPanel();
    if (logOpen) log.open = logOpen.open;
    const parts = [topBar(), felt];
    if (view && status === 'finished') parts.push(resultsPanel());
    else if (view && status === 'waiting') parts.push(waitingPanel());
    parts.push(log);
    replaceKeepingFocus(container, parts, '.hand .card.playable, .hand .card, #actions button');
    const logList = container.querySelector('#log');
    if (logList) logList.scrollTop = logList.scrollHeight;
    tick();
  }

  // ------------------------------------------------------------------ countdown

  function tick() {
    const now = performance.now();
    const total = st.windowTotal || (st.table ? st.table.rules.timer * 1000 : 0);
    for (const el of container.querySelectorAll('.seat.deciding')) {
      const counter = el.querySelector('.countdown');
      const bar = el.querySelector('.timer-bar span');
      const deadline = deadlineOf(Number(el.dataset.seat));
      if (deadline === null) {
        if (counter) counter.hidden = true;
        if (bar) bar.parentElement.hidden = true;
        continue;
      }
      const left = Math.max(0, deadline.at - now);
      if (counter) {
        counter.hidden = false;
        counter.textContent = countdownText(left);
        counter.dataset.kind = deadline.kind;
        counter.classList.toggle('urgent', left < 5000 || (deadline.kind === 'grace' && left < 15000));
      }
      if (bar) {
        bar.parentElement.hidden = deadline.kind !== 'timer' || !total;
        if (deadline.kind === 'timer' && total) bar.style.width = `${Math.min(100, (left / total) * 100)}%`;
      }
    }
    const note = container.querySelector('#deadline-note');
    if (note) {
      const deadline = deadlineOf(Number(note.dataset.seat));
      note.textContent = deadline ? deadlineNoteText(Number(note.dataset.seat), note.dataset.kind, deadline.at - now) : '';
    }
    const rematch = container.querySelector('#rematch-countdown');
    if (rematch && st.rematchAt !== null) rematch.textContent = t('rematch.time_left', { time: clockText(st.rematchAt - now) });
  }

  const ticker = setInterval(tick, 250);
  const keys = (event) => {
    if (event.key === 'Escape' && st.selection.length) {
      st.selection = [];
      render();
    }
  };
  document.addEventListener('keydown', keys);
  const offUser = onUserChange(() => render());
  socket.start();
  render();

  return {
    relabel() {
      render();
    },
    unmount() {
      socket.stop();
      clearInterval(ticker);
      clearTimeout(st.busyTimer);
      document.removeEventListener('keydown', keys);
      offUser();
    },
  };
}
