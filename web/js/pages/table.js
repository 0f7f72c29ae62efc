// The play table (/t/<code>) and the spectator view (/w/<code>): the socket, the state it feeds,
// and one redraw of the felt per message. The parts live in web/js/table/: seats.js (opponents
// around the oval), hand.js (the hand and card clicks), area.js (stock, pairs, discard, prompt),
// controls.js (title line, action bar, mute), log.js, results.js, waiting.js, motion.js (cards that
// move), sound.js and turn.js (sounds, "● Your turn"), reasons.js (why a card cannot be played),
// guard.js (leaving a running match asks first), ready.js (the ready check before a staked match).
import { codeText, errorText, post } from '../api.js';
import { h, replaceKeepingFocus } from '../dom.js';
import { setSlimHeader } from '../header.js';
import { t } from '../i18n.js';
import { refusalText } from '../integrity.js';
import { currentUser, onUserChange, playAsGuest, refreshMe, suggestedGuestName } from '../session.js';
import { toast } from '../toast.js';
import { deadlineNoteText, tableArea } from '../table/area.js';
import { fairnessLine, newSeedState, seedFor, sendClientSeed } from '../table/fairline.js';
import { actionBar, topBar } from '../table/controls.js';
import { clockText, countdownText, seatNames } from '../table/describe.js';
import { leaveGuard } from '../table/guard.js';
import { noticeTable, setPageTitle } from '../notify.js';
import { handRow } from '../table/hand.js';
import { addToLog, logPanel, newLog } from '../table/log.js';
import { animateChange, measure } from '../table/motion.js';
import { seatBox } from '../table/render.js';
import { resultsPanel, resultsReopen } from '../table/results.js';
import { opponentsRing } from '../table/seats.js';
import { onMuteChange, playSound } from '../table/sound.js';
import { eventSounds, timerTick, turnCues } from '../table/turn.js';
import { TableSocket } from '../table/socket.js';
import { chatPanel } from '../table/chat.js';
import { waitingPanel } from '../table/waiting.js';
import { readyCheck } from '../table/ready.js';

const DEFAULT_GRACE_S = 60;
const MUST_DECIDE = ['lead', 'defend'];
// Wide screens show the log beside the felt, open (app.css "Wide screens"); smaller ones fold it into
// a button in the top bar, closed until asked for.
const LOG_BESIDE = window.matchMedia('(min-width: 1200px) and (min-height: 600px)');

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
    log: newLog(),
    selection: [],
    busy: null,
    busyTimer: null,
    deadlineAt: null,
    windowTotal: null, // ms of the open challenge window (cheating tables), for the timer ring
    seatDeadlines: {}, // seat -> {at, kind}: when its decision runs out (performance.now() time), and why
    rematchAt: null,
    myTurn: false,
    resultsShown: null,
    resultsHidden: null,
    joinError: '',
    rematchError: '', // a refused rematch (or sitting down for one), shown on the results
    seeds: newSeedState(), // provably fair deals: this browser's client seed (web/js/table/fairline.js)
    guestName: suggestedGuestName(t('auth.guest_name_prefix')),
  };
  const socket = new TableSocket(code, { onMessage, onState });
  const guard = leaveGuard(inRunningMatch, () => (st.table && st.table.grace_s) || DEFAULT_GRACE_S);
  const container = h('div', { class: 'page table-page', id: 'table-page' });
  let chat = null; // the chat panel (web/js/table/chat.js), made once the page's verbs exist
  root.replaceChildren(container);
  // The slim header from the first paint on (whatever the table's state turns out to be): growing or
  // shrinking it when the socket's welcome arrives would shift the whole page.
  setSlimHeader(true);

  /** What the parts (web/js/table/*) get: the state and the page's verbs. */
  const game = {
    st,
    container,
    render,
    send,
    legal: () => (st.view && st.view.legal) || [],
    names: () => seatNames(st.table ? st.table.seats : []),
    decidingSeats,
    deadlineOf,
    isCreator: () => Boolean(st.table && st.you && st.table.creator === st.you),
    join,
    joinAsGuest,
    tableCall,
    leave,
    inRunningMatch,
    refuse(why) {
      toast(why.text, 'info');
    },
    fairnessLine: () => fairnessLine(game, () => sendClientSeed(game, socket)),
  };

  chat = chatPanel(game, socket);
  const ready = readyCheck(game);

  // ------------------------------------------------------------------ incoming

  function onState(state) {
    st.conn = state;
    if (state === 'gone') st.gone = true;
    render();
  }

  function onMessage(message) {
    switch (message.type) {
      case 'welcome':
      case 'update': {
        if (message.version < st.version) return;
        noticeTable(message); // someone sat down, or your turn while the tab is hidden
        const before = st.table ? st.table.status : null;
        const fresh = message.type === 'welcome' && message.resumed_from === undefined;
        st.version = message.version;
        st.seat = message.seat ?? null;
        st.view = message.view;
        st.table = message.table;
        if (message.table && message.table.you) st.you = message.table.you;
        if (fresh && message.recent) {
          // A new page (or a resume too far back): the log is the match's recent events.
          st.log = newLog();
          addToLog(st.log, message.recent, game.names());
        }
        if (fresh && !st.log.entries.length) st.log.boutAttacks = st.view ? st.view.table.map((pair) => pair.attack) : [];
        const events = message.events || [];
        if (events.length) addToLog(st.log, events, game.names());
        readDeadlines(message.table);
        const inWindow = Boolean(st.view && st.view.phase === 'challenge');
        if (!inWindow) st.windowTotal = null;
        else if (st.windowTotal === null) st.windowTotal = message.table.deadline_ms;
        if (message.type === 'update' && events.length) clearBusy();
        if (st.selection.length && !st.selection.every((card) => st.view && st.view.hand && st.view.hand.includes(card))) st.selection = [];
        const status = st.table.status;
        if (before !== status) onStatusChange(before, status);
        sendClientSeed(game, socket);
        render(message.type === 'update' ? events : null);
        if (message.type === 'update') eventSounds(events, st.seat, st.table.results);
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
      case 'chat':
        chat.add(message);
        break;
      case 'error':
        if (st.seeds.seedIds.has(message.id)) {
          st.seeds.seedSentFor = null; // e.g. the match started meanwhile: the next commitment gets one
          break;
        }
        if (chat.onError(message)) break;
        if (!message.id || message.id === st.busy) clearBusy();
        toast(codeText(message.code) || `${t('error.generic')} (${message.message})`, 'error');
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

  function onStatusChange(before, status) {
    if (status === 'playing') {
      st.joinError = '';
      st.rematchError = '';
    }
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
    st.busyTimer = setTimeout(function giveUp() {
      // Still on its way (the socket sends it again after a reconnect, and the server answers it):
      // the controls stay off rather than offer moves of a table that is about to change.
      if (socket.pending(id)) {
        st.busyTimer = setTimeout(giveUp, 4000);
        return;
      }
      st.busy = null;
      render();
    }, 4000);
    if (action.card || action.cards) playSound('card');
    else if (action.type === 'take') playSound('take');
    render();
  }

  async function join(seat) {
    st.joinError = '';
    st.rematchError = '';
    try {
      const body = seat === undefined ? {} : { seat };
      const fair = st.table && st.table.fairness;
      if (fair && !watch && st.table.status !== 'playing') {
        // Sitting down may fill the table and start the match at once: the seed goes along.
        Object.assign(body, { client_seed: seedFor(st.seeds, fair), commitment: fair.commitment });
      }
      await post(`/api/tables/${encodeURIComponent(code)}/join`, body);
      if (fair) st.seeds.seedSentFor = fair.commitment;
      refreshMe();
    } catch (failure) {
      st.joinError = await refusalText(failure);
      if (st.table && st.table.status === 'finished') st.rematchError = st.joinError;
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
    if (path === 'rematch') st.rematchError = '';
    try {
      await post(`/api/tables/${encodeURIComponent(code)}/${path}`, body);
    } catch (failure) {
      if (path === 'rematch') {
        // Refused (e.g. the pair's daily coin cap): said on the results, where the button was.
        st.rematchError = await refusalText(failure);
        render();
      } else {
        toast(errorText(failure), 'error');
      }
    }
  }

  function leave() {
    if (inRunningMatch() && !window.confirm(t('table.leave_confirm'))) return;
    tableCall('leave', {}).then(refreshMe);
  }

  /** Seated in a running match and not out yet: leaving costs the match. */
  function inRunningMatch() {
    return Boolean(st.table && st.table.status === 'playing' && st.seat !== null && st.view && !st.view.players[st.seat].out);
  }

  // ------------------------------------------------------------------ rendering

  function decidingSeats() {
    return st.view && st.table && st.table.status === 'playing' ? st.view.decision.seats : [];
  }

  /** Seats that may act but need not (throw in, add to a take, challenge): shown softer than a must. */
  function mayOnlySeats() {
    return st.view && !MUST_DECIDE.includes(st.view.decision.kind) ? decidingSeats() : [];
  }

  function graceSeats() {
    return Object.entries(st.seatDeadlines).filter(([, deadline]) => deadline.kind === 'grace').map(([seat]) => Number(seat));
  }

  function myArea() {
    const table = st.table;
    const view = st.view;
    const deciding = decidingSeats().includes(st.seat);
    const may = deciding && mayOnlySeats().includes(st.seat);
    const me = seatBox(table.seats[st.seat], view ? view.players[st.seat] : null, { me: true, deciding });
    if (may) me.classList.add('may');
    return h(
      'div',
      { class: ['me-area', deciding && 'my-turn', deciding && (may ? 'may-act' : 'must-act')], id: 'me-area' },
      h(
        'div',
        { class: 'me-row' },
        me,
        view && view.phase !== 'over' ? actionBar(game) : null,
      ),
      view ? handRow(game) : null,
    );
  }

  // A tap is a press and a release on the same element. An update that redraws the page between
  // the two replaces that element, and the browser then makes no click of it: the tap is lost (a
  // bot's rematch vote arriving under the finger did exactly that). So while a pointer is down the
  // drawing waits, its events gathered, and it runs right after the click the release makes; a
  // press held for ten seconds lets it through (a release the page never heard of).
  let pressing = null; // the timer that ends a long press, while a pointer is down on the page
  let deferred = null; // {events} of the drawing that waits for the release
  const press = () => {
    clearTimeout(pressing);
    pressing = setTimeout(release, 10000);
  };
  const release = () => {
    if (pressing === null) return;
    clearTimeout(pressing);
    pressing = null;
    if (deferred) {
      const waiting = deferred.events;
      deferred = null;
      setTimeout(() => render(waiting), 0);
    }
  };
  container.addEventListener('pointerdown', press, true);
  window.addEventListener('pointerup', release, true);
  window.addEventListener('pointercancel', release, true);

  function render(events = null) {
    if (pressing !== null) {
      const gathered = deferred ? deferred.events : null;
      deferred = { events: gathered && events ? [...gathered, ...events] : gathered || events };
      return;
    }
    draw(events);
  }

  function draw(events) {
    const before = events && container.querySelector('#felt') ? measure(container) : null;
    const playing = Boolean(st.table && st.view && st.table.status !== 'waiting');
    container.classList.toggle('in-match', playing);
    if (st.gone) {
      replaceKeepingFocus(container, [h('section', { class: 'panel narrow' }, h('h1', { text: t('table.gone_title') }), h('p', { text: t('table.gone') }), h('a', { class: 'btn primary', href: '/#/', text: t('nav.lobby') }))]);
      return;
    }
    if (!st.table) {
      replaceKeepingFocus(container, [topBar(game), h('p', { class: 'muted', text: t('common.loading') })]);
      return;
    }
    const view = st.view;
    const status = st.table.status;
    const felt = h(
      'section',
      { class: ['felt', status === 'finished' && 'finished', `seats-${st.table.seats.length}`, st.seat === null && 'watching'], id: 'felt', 'aria-label': t('table.felt'), dataset: { version: String(st.version), status, phase: view ? view.phase : 'none' } },
      view ? opponentsRing({ table: st.table, view, mySeat: st.seat, deciding: decidingSeats(), mayOnly: mayOnlySeats(), graceSeats: graceSeats() }) : null,
      view ? tableArea(game) : waitingPanel(game),
      st.seat !== null ? myArea() : null,
    );
    const previousLog = container.querySelector('.log-panel');
    const parts = [topBar(game), felt];
    if (view && status === 'finished') parts.push(resultsPanel(game), resultsReopen(game));
    else if (view && status === 'waiting') parts.push(waitingPanel(game));
    parts.push(logPanel(st.log, previousLog ? previousLog.open : LOG_BESIDE.matches), ready.panel());
    chat.update();
    parts.push(chat.el);
    replaceKeepingFocus(container, parts, '.hand .card.playable, .hand .card, #actions button');
    const logList = container.querySelector('#log');
    if (logList) logList.scrollTop = logList.scrollHeight;
    const mine = decidingSeats().includes(st.seat);
    turnCues(st.myTurn, mine);
    st.myTurn = mine;
    if (inRunningMatch()) guard.arm();
    if (before) container.dataset.flights = String(animateChange(container, before, events, st.seat));
    tick();
  }

  // ------------------------------------------------------------------ countdown

  // The ticker only writes what changed (a second's text, the ring's share, whole seconds), so that a
  // player thinking over a card costs the page one small repaint a second, not a relayout every tick.
  function setText(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }

  function tick() {
    const now = performance.now();
    const total = st.windowTotal || (st.table ? st.table.rules.timer * 1000 : 0);
    for (const el of container.querySelectorAll('.seat.deciding')) {
      const counter = el.querySelector('.countdown');
      const bar = el.querySelector('.timer-bar span');
      const seat = Number(el.dataset.seat);
      const deadline = deadlineOf(seat);
      if (deadline === null) {
        if (counter) counter.hidden = true;
        if (bar) bar.parentElement.hidden = true;
        continue;
      }
      const left = Math.max(0, deadline.at - now);
      if (counter) {
        if (counter.hidden) counter.hidden = false;
        // The move timer's ring holds seconds ("60", "42"); idle limits and graces read "4:05".
        setText(counter, deadline.kind === 'timer' && left < 99500 ? String(Math.ceil(left / 1000)) : countdownText(left));
        if (counter.dataset.kind !== deadline.kind) counter.dataset.kind = deadline.kind;
        counter.classList.toggle('urgent', left < 5000 || (deadline.kind === 'grace' && left < 15000));
      }
      // The ring and the bar move in whole seconds, with the number they surround.
      const share = deadline.kind === 'timer' && total ? Math.min(1, (Math.ceil(left / 1000) * 1000) / total) : 1;
      const shareText = share.toFixed(3);
      if (el.style.getPropertyValue('--left') !== shareText) el.style.setProperty('--left', shareText);
      if (bar) {
        const barHidden = deadline.kind !== 'timer' || !total;
        if (bar.parentElement.hidden !== barHidden) bar.parentElement.hidden = barHidden;
        const width = `${share * 100}%`;
        if (!barHidden && bar.style.width !== width) bar.style.width = width;
      }
      if (seat === st.seat) timerTick(left);
    }
    for (const el of container.querySelectorAll('.grace-clock')) {
      const deadline = st.seatDeadlines[Number(el.dataset.seat)];
      setText(el, deadline ? clockText(deadline.at - now) : '');
    }
    const note = container.querySelector('#deadline-note');
    if (note) {
      const deadline = deadlineOf(Number(note.dataset.seat));
      setText(note, deadline ? deadlineNoteText(game, Number(note.dataset.seat), note.dataset.kind, deadline.at - now) : '');
    }
    const rematch = container.querySelector('#rematch-countdown');
    if (rematch && st.rematchAt !== null) setText(rematch, t('rematch.time_left', { time: clockText(st.rematchAt - now) }));
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
  const offMute = onMuteChange(() => render());
  // Crossing into or out of the wide layout (a rotated tablet, a resized window) opens the log beside
  // the felt or folds it back into its button, so that it never covers the table unasked.
  const logLayout = () => {
    const panel = container.querySelector('#log-panel');
    if (panel) panel.open = LOG_BESIDE.matches;
  };
  LOG_BESIDE.addEventListener('change', logLayout);
  socket.start();
  render();

  return {
    relabel() {
      render();
    },
    unmount() {
      socket.stop();
      guard.stop();
      ready.stop();
      clearInterval(ticker);
      clearTimeout(st.busyTimer);
      document.removeEventListener('keydown', keys);
      container.removeEventListener('pointerdown', press, true);
      window.removeEventListener('pointerup', release, true);
      window.removeEventListener('pointercancel', release, true);
      clearTimeout(pressing);
      offUser();
      offMute();
      LOG_BESIDE.removeEventListener('change', logLayout);
      setSlimHeader(false);
      setPageTitle(null);
    },
  };
}
