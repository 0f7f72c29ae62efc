// The play table (/t/<code>) and the spectator view (/w/<code>): the socket, the one store it feeds
// (web/js/table/store.js) and the parts that draw from it, each only when what it shows changed. The
// parts live in web/js/table/: seats.js (opponents around the oval), hand.js (the hand and card
// clicks), area.js (stock, pairs, discard, prompt), controls.js (title line, action bar, toggles),
// log.js, results.js, waiting.js, motion.js (cards that move), sound.js and turn.js (sounds, "● Your
// turn"), reasons.js (why a card cannot be played, and why a card is a cheat), guard.js (leaving a
// running match asks first), ready.js (the ready check before a staked match), dialogs.js (the
// in-page questions: leaving, a first cheat).
import { codeText, errorText, post } from '../api.js';
import { h, replaceKeepingFocus } from '../dom.js';
import { setSlimHeader } from '../header.js';
import { formatNumber, t } from '../i18n.js';
import { refusalText } from '../integrity.js';
import { navigate } from '../main.js';
import { currentUser, onSignInChange, playAsGuest, refreshMe, signInChanged, suggestedGuestName } from '../session.js';
import { toast } from '../toast.js';
import { deadlineNoteText, infoLine, pairsArea, pilesRow } from '../table/area.js';
import { fairnessLine, newSeedState, seedFor, sendClientSeed } from '../table/fairline.js';
import { actionBar, topBar } from '../table/controls.js';
import { clockText, countdownText, seatNames } from '../table/describe.js';
import { confirmDialog } from '../table/dialogs.js';
import { leaveGuard } from '../table/guard.js';
import { noticeTable, setPageTitle } from '../notify.js';
import { handRow } from '../table/hand.js';
import { addToLog, logPanel, newLog } from '../table/log.js';
import { animateChange, measure } from '../table/motion.js';
import { provisionalEvents, provisionalView } from '../table/provisional.js';
import { cheatOf } from '../table/reasons.js';
import { seatBox } from '../table/render.js';
import { resultsPanel, resultsReopen } from '../table/results.js';
import { opponentsRing } from '../table/seats.js';
import { isMuted, onMuteChange, playSoundAfterPaint } from '../table/sound.js';
import { eventSounds, timerTick, turnCues } from '../table/turn.js';
import { TableSocket } from '../table/socket.js';
import { chatPanel } from '../table/chat.js';
import { json, createStore } from '../table/store.js';
import { waitingPanel, waitingEffects } from '../table/waiting.js';
import { readyCheck } from '../table/ready.js';

const DEFAULT_GRACE_S = 60;
const MUST_DECIDE = ['lead', 'defend'];
// Wide screens show the log beside the felt, open (app.css "Wide screens"); smaller ones fold it into
// a button in the top bar, closed until asked for.
const LOG_BESIDE = window.matchMedia('(min-width: 1200px) and (min-height: 600px)');

export function mount(root, { code, watch }) {
  const store = createStore({
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
    logRev: 0, // bumped when the log gains entries (the log object itself is kept)
    logOpen: LOG_BESIDE.matches,
    events: null, // the last update's events (what the cards fly for)
    selection: [],
    busy: null,
    confirmed: null, // the server's view while one's own card move is drawn ahead of it (table/provisional.js)
    deadlineAt: null,
    windowTotal: null, // ms of the open challenge window (cheating tables), for the timer ring
    seatDeadlines: {}, // seat -> {at, kind}: when its decision runs out (performance.now() time), and why
    rematchAt: null,
    resultsHidden: null,
    joinError: '',
    rematchError: '', // a refused rematch (or sitting down for one), shown on the results
    fairDetailsOpen: false,
    seeds: newSeedState(), // provably fair deals: this browser's client seed (web/js/table/fairline.js)
    seedsRev: 0,
    guestName: suggestedGuestName(t('auth.guest_name_prefix')),
    cheatAsked: null, // the match whose first cheat was confirmed (cheating tables)
    lang: 0, // bumped by relabel(): every part redraws in the new language
    user: 0, // bumped when the signed-in user changes
    muted: isMuted(),
  });
  const st = store.state;
  const set = store.set;
  const socket = new TableSocket(code, { onMessage, onState });
  const guard = leaveGuard(inRunningMatch, () => (st.table && st.table.grace_s) || DEFAULT_GRACE_S);
  const container = h('div', { class: 'page table-page', id: 'table-page' });
  let busyTimer = null;
  let myTurn = false;
  let appeared = null; // the match whose results already rose into view (animated once)
  root.replaceChildren(container);
  // The slim header from the first paint on (whatever the table's state turns out to be): growing or
  // shrinking it when the socket's welcome arrives would shift the whole page.
  setSlimHeader(true);

  /** What the parts (web/js/table/*) get: the state (read-only), `set` and the page's verbs. */
  const game = {
    st,
    set,
    container,
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
    /** True the first time the results of `matchId` are drawn (they rise into view once). */
    firstSight(matchId) {
      const first = appeared !== matchId;
      appeared = matchId;
      return first;
    },
    fairnessLine: () => fairnessLine(game, () => sendClientSeed(game, socket)),
    chatToggle: null,
  };

  const chat = chatPanel(game, socket);
  game.chatToggle = () => chat.toggle;
  const ready = readyCheck(game);

  // ------------------------------------------------------------------ the parts

  const lang = (s) => s.lang;
  const playing = (s) => Boolean(s.table && s.view && s.table.status !== 'waiting');

  const top = store.part('top', (s) => [lang(s), s.user, s.muted, s.conn, s.seat, s.watch, json(s.table && { name: s.table.name, spectators: s.table.spectators, rules: s.table.rules, series: s.table.series, status: s.table.status, bot: s.table.bot_table }), inRunningMatch(), s.gone], () => (st.gone ? null : topBar(game)));
  const opponents = store.part('opponents', (s) => [lang(s), s.seat, json(s.table && s.table.seats), json(s.view && s.view.players), decidingSeats().join(), mayOnlySeats().join(), graceSeats().join(), s.view && s.view.phase], () => (st.view && st.table ? opponentsRing({ table: st.table, view: st.view, mySeat: st.seat, deciding: decidingSeats(), mayOnly: mayOnlySeats(), graceSeats: graceSeats() }) : null));
  // One's own card move, drawn ahead of the server (table/provisional.js), changes the hand and the
  // pairs alone: the parts it leaves as they were select the view it was drawn from (`confirmed`), so
  // a tap redraws (and the browser lays out) the hand and the pairs only.
  const shown = (s) => s.confirmed || s.view;
  const HAND_FOCUS = '.hand .card.playable, .hand .card, #actions button';
  const piles = store.part('piles', (s) => [lang(s), shown(s)], () => (st.view ? pilesRow(game) : null));
  const pairs = store.part('pairs', (s) => [lang(s), s.view, s.selection, s.seat], () => (st.view ? pairsArea(game) : null), { focus: '.hand .card.playable, #actions button' });
  const info = store.part('info', (s) => [lang(s), shown(s), s.seat, s.table && s.table.status, json(s.table && s.table.seats)], () => (st.view ? infoLine(game) : null));
  const center = store.part(
    'center',
    (s) => (s.view ? [lang(s), 'view', Boolean(s.table)] : [lang(s), 'waiting', s.table, s.seat, s.user, s.joinError, s.rematchError, s.guestName, s.seedsRev, s.you]),
    () => (!st.table ? null : st.view ? h('div', { class: 'center' }, piles.el, pairs.el, info.el) : waitingPanel(game)),
    { focus: '.hand .card.playable, #actions button' },
  );
  // While a move drawn ahead is on its way the action bar is not drawn again (its `busy` reads as
  // before the tap, when it was null): its buttons are switched off where they are (busyButtons),
  // and the server's answer draws it.
  const meRow = store.part('me-row', (s) => [lang(s), s.seat, shown(s), s.selection.join(), s.confirmed ? null : s.busy, s.conn, json(s.table && s.seat !== null && s.table.seats[s.seat]), s.cheatAsked, s.table && s.table.status], () => (st.table && st.seat !== null ? myRow() : null), { focus: HAND_FOCUS });
  const hand = store.part('hand', (s) => [lang(s), s.seat, s.view, s.selection, s.busy, s.conn, s.cheatAsked, s.table && s.table.status, s.table && s.table.rules.cheating], () => (st.table && st.seat !== null && st.view ? handRow(game) : null), { focus: HAND_FOCUS });
  const me = store.part('me', (s) => [lang(s), s.seat, Boolean(s.table), Boolean(s.view), decidingSeats().join(), mayOnlySeats().join()], () => (st.table && st.seat !== null ? myArea() : null), { focus: HAND_FOCUS });
  const after = store.part('after', (s) => [lang(s), s.user, s.seat, s.table && s.table.status, s.view ? s.table.results : null, json(s.view && s.table.rematch), s.resultsHidden, s.rematchError, playing(s) ? null : s.view && s.table], () => {
    if (!st.view || !st.table) return null;
    if (st.table.status === 'finished') return [resultsPanel(game), resultsReopen(game)];
    if (st.table.status === 'waiting') return waitingPanel(game);
    return null;
  });
  const log = store.part('log', (s) => [lang(s), s.logRev, s.logOpen, Boolean(s.table), s.seat], () => (st.table ? logPanel(st.log, st.logOpen, (open) => set({ logOpen: open }), st.seat) : null));
  const readyPart = store.part('ready', (s) => [lang(s), s.seat, json(s.table && s.table.ready_check), json(s.table && s.table.seats), s.table && s.table.status], () => ready.panel());
  const loading = store.part('loading', (s) => [lang(s), Boolean(s.table), s.gone], () => {
    if (st.gone) return h('section', { class: 'panel narrow' }, h('h1', { text: t('table.gone_title') }), h('p', { text: t('table.gone') }), h('a', { class: 'btn primary', href: '/#/', text: t('nav.lobby') }));
    return st.table ? null : h('p', { class: 'muted', text: t('common.loading') });
  });

  const felt = h('section', { class: 'felt', id: 'felt' }, opponents.el, center.el, me.el);
  container.append(top.el, loading.el, felt, after.el, log.el, readyPart.el, chat.el);

  /** The felt's own attributes: written on every flush (a few attributes, no drawing). */
  function feltAttributes() {
    const table = st.table;
    const view = st.view;
    container.classList.toggle('in-match', playing(st));
    // A friend's challenge (notices.js) waits in a slim banner over the header while a match runs,
    // off the felt (app.css "notice-box").
    document.body.classList.toggle('match-running', playing(st) && !st.gone);
    felt.hidden = !table || st.gone;
    chat.el.hidden = !table || st.gone; // shown with the table: moving it into the bar then would shift the page
    if (!table) return;
    const status = table.status;
    felt.className = ['felt', status === 'finished' && 'finished', `seats-${table.seats.length}`, st.seat === null && 'watching', table.rules.cheating && 'cheating', !view && 'before'].filter(Boolean).join(' ');
    felt.setAttribute('aria-label', t('table.felt'));
    felt.dataset.version = String(st.version);
    felt.dataset.status = status;
    felt.dataset.phase = view ? view.phase : 'none';
  }

  let logDrawn = null; // the log's drawing whose newest line was scrolled into view
  store.around(
    (keys) => ((keys.has('events') || keys.has('later')) && st.events && felt.querySelector('#hand, #table-zone') ? measure(container) : null),
    (before, keys) => {
      feltAttributes();
      if (keys.has('busy') || keys.has('conn')) busyButtons();
      tick(); // before anything reads the layout: the page is laid out once, with the clocks set
      // A new drawing of the open log shows its newest line (only then: reading its height lays the
      // page out; a folded log is drawn again when it opens).
      if (log.el.dataset.draws !== logDrawn && st.logOpen) {
        logDrawn = log.el.dataset.draws;
        const logList = container.querySelector('#log');
        if (logList) logList.scrollTop = logList.scrollHeight;
      }
      if (before) container.dataset.flights = String(animateChange(container, before, st.events, st.seat));
      // A hand left for the next frame (send: store `later`) still holds the cards just played: they
      // keep their places there, unseen, until it closes up (and show again if the move is refused).
      // Marked after the flights are measured, so that the page works its style out once.
      const held = st.view && st.view.hand;
      for (const el of hand.el.querySelectorAll('.card[data-card]')) el.classList.toggle('played', Boolean(held) && !held.includes(el.dataset.card));
    },
  );

  // The first tap of a page runs the code of a card move for the first time. So once the player has
  // a card to play, the same code runs once with nothing to show for it: the parts are drawn for the
  // move off the page (store.rehearse) and the flight is measured with every card where it is.
  let rehearsal = 'due'; // 'due', then 'asked', then 'done'
  const cardMove = () => game.legal().find((a) => a.card || (a.cards && a.cards.length));
  function rehearseTap() {
    if (st.busy || st.seat === null || !st.view || !container.isConnected) {
      rehearsal = 'due';
      return;
    }
    const action = cardMove();
    const view = action ? provisionalView(st.view, action, st.seat) : null;
    if (!view) {
      rehearsal = 'due';
      return;
    }
    rehearsal = 'done';
    cheatOf(st.view, action);
    store.rehearse({ busy: 'rehearsal', selection: [], view, events: provisionalEvents(action, st.seat), confirmed: st.view });
    animateChange(container, measure(container), [], st.seat);
    container.dataset.rehearsed = 'tap';
  }

  store.effect((keys) => {
    if (rehearsal === 'due' && st.view && !st.busy && cardMove()) {
      rehearsal = 'asked';
      setTimeout(rehearseTap, 0);
    }
    const mine = decidingSeats().includes(st.seat);
    if (keys.has('view') || keys.has('table') || keys.has('*')) {
      turnCues(myTurn, mine);
      myTurn = mine;
      if (inRunningMatch()) guard.arm();
    }
    if (keys.has('table') || keys.has('seat') || keys.has('user') || keys.has('*')) chat.update();
    if (keys.has('table') || keys.has('view')) {
      ready.sync();
      waitingEffects(game);
    }
  });

  // ------------------------------------------------------------------ incoming

  function onState(state) {
    set(state === 'gone' ? { conn: state, gone: true } : { conn: state });
  }

  function onMessage(message) {
    switch (message.type) {
      case 'welcome':
      case 'update': {
        if (message.version < st.version) return;
        noticeTable(message); // someone sat down, or your turn while the tab is hidden
        const before = st.table ? st.table.status : null;
        const fresh = message.type === 'welcome' && message.resumed_from === undefined;
        const patch = {
          version: message.version,
          seat: message.seat ?? null,
          view: message.view,
          table: message.table,
          events: message.type === 'update' ? message.events || [] : null,
        };
        patch.confirmed = null; // the server's view replaces one drawn ahead of it
        if (message.table && message.table.you) patch.you = message.table.you;
        let log = st.log;
        let logged = false;
        if (fresh && message.recent) {
          // A new page (or a resume too far back): the log is the match's recent events.
          log = newLog();
          addToLog(log, message.recent, seatNames(message.table.seats));
          logged = true;
        }
        if (fresh && !log.entries.length) log.boutAttacks = message.view ? message.view.table.map((pair) => pair.attack) : [];
        const events = message.events || [];
        if (events.length) {
          addToLog(log, events, seatNames(message.table.seats));
          logged = true;
        }
        patch.log = log;
        if (logged) patch.logRev = st.logRev + 1;
        Object.assign(patch, readDeadlines(message.table));
        const inWindow = Boolean(message.view && message.view.phase === 'challenge');
        patch.windowTotal = !inWindow ? null : st.windowTotal === null ? message.table.deadline_ms : st.windowTotal;
        // Our own move comes back as an update with events: the hand is free again in the same
        // drawing, so the ack that follows changes nothing (one drawing per move, not two).
        if (message.type === 'update' && events.length) Object.assign(patch, freeHand());
        const hand = message.view && message.view.hand;
        if (st.selection.length && !st.selection.every((card) => hand && hand.includes(card))) patch.selection = [];
        const status = message.table.status;
        if (status === 'playing' && before !== 'playing') Object.assign(patch, { joinError: '', rematchError: '' });
        set(patch);
        if (before !== status) onStatusChange(before, status);
        sendClientSeed(game, socket);
        if (message.type === 'update') eventSounds(events, st.seat, st.table.results);
        break;
      }
      case 'presence':
        // Someone connected or left: the same version, new table facts (who is online, spectators).
        if (message.version < st.version || !message.table) return;
        set({ table: message.table, deadlineAt: message.table.deadline_ms !== null && message.table.deadline_ms !== undefined ? performance.now() + message.table.deadline_ms : null, events: null });
        break;
      case 'ack':
        // A move's update comes before its ack; a view drawn ahead never outlives the answer.
        if (message.id === st.busy) set({ ...freeHand(), ...undoProvisional() });
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
        if (!message.id || message.id === st.busy) set({ ...freeHand(), ...undoProvisional() });
        toast(codeText(message.code) || `${t('error.generic')} (${message.message})`, 'error');
        break;
      case 'bye':
        if (message.code === 'signed_out') {
          toast(t('table.signed_out'), 'info');
          signInChanged(); // the header then shows the signed-out state
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
    const seatDeadlines = {};
    for (const seat of (table && table.seats) || []) {
      if (known(seat.deadline_ms)) seatDeadlines[seat.seat] = { at: now + seat.deadline_ms, kind: seat.deadline_kind || 'timer' };
    }
    return {
      deadlineAt: table && known(table.deadline_ms) ? now + table.deadline_ms : null,
      seatDeadlines,
      rematchAt: table && table.rematch ? now + table.rematch.deadline_ms : null,
    };
  }

  /** When seat `seat`'s decision runs out, and why ('timer', 'idle', 'grace'), or null. */
  function deadlineOf(seat) {
    if (st.seatDeadlines[seat]) return st.seatDeadlines[seat];
    return st.deadlineAt === null ? null : { at: st.deadlineAt, kind: 'timer' };
  }

  function onStatusChange(before, status) {
    const me = currentUser();
    if (!me || me.kind !== 'account' || st.seat === null) return;
    if (status === 'playing' && st.table.rules.stake > 0) refreshMe();
    if (status === 'finished' && before !== null) {
      // The ledger settles a moment after the result: look a few times.
      for (const delay of [200, 700, 1500, 3000, 6000]) setTimeout(refreshMe, delay);
    }
  }

  function freeHand() {
    clearTimeout(busyTimer);
    return { busy: null };
  }

  /** Back to the server's view (a refused move drawn ahead of it: its cards fly back to the hand). */
  function undoProvisional() {
    return st.confirmed ? { view: st.confirmed, confirmed: null, events: [] } : {};
  }

  // ------------------------------------------------------------------ outgoing

  const NO_ASK_KEY = 'durak.cheat.noask';

  /** At a cheating table the first cheat of a match asks first (unless "don't ask again"). */
  function cheatNeedsAsking(action) {
    if (!st.table || !st.table.rules.cheating || !st.view) return null;
    const cheat = cheatOf(st.view, action);
    if (!cheat || st.cheatAsked === st.table.match_id) return null;
    try {
      if (localStorage.getItem(NO_ASK_KEY) === '1') return null;
    } catch {
      // private mode: ask
    }
    return cheat;
  }

  async function askCheat(action, cheat) {
    const answer = await confirmDialog({
      id: 'cheat-dialog',
      title: t('cheat.title'),
      text: t('cheat.question', { why: cheat.text }),
      confirm: t('cheat.play'),
      cancel: t('cheat.cancel'),
      optOut: t('cheat.dont_ask'),
    });
    if (!answer) return;
    if (answer.optOut) {
      try {
        localStorage.setItem(NO_ASK_KEY, '1');
      } catch {
        // private mode: asked again next match
      }
    }
    set({ cheatAsked: st.table.match_id });
    send(action);
  }

  function send(action) {
    if (st.busy || st.conn !== 'open') return;
    const cheat = cheatNeedsAsking(action);
    if (cheat) {
      askCheat(action, cheat);
      return;
    }
    const fields = {};
    if (action.type === 'cover') Object.assign(fields, { attack: action.attack, card: action.card });
    if (action.cards) fields.cards = action.cards;
    if (action.type === 'challenge') fields.move = action.move;
    const id = socket.command(action.type, fields);
    if (!id) return;
    // A card move is drawn at once (the card flies to the table); the server's update confirms it.
    const provisional = provisionalView(st.view, action, st.seat);
    const selection = st.selection.length ? [] : st.selection; // the same empty one: nothing to redraw for it
    if (provisional) {
      // The card lies on the table in the first frame; the hand closes up behind it after that frame
      // (laying the hand out again is most of a tap's work). Till then the played cards keep their
      // places in the hand, unseen.
      set({ busy: id, selection, view: provisional, events: provisionalEvents(action, st.seat), confirmed: st.confirmed || st.view }, { later: ['hand'] });
    } else {
      set({ busy: id, selection });
    }
    clearTimeout(busyTimer);
    busyTimer = setTimeout(function giveUp() {
      // Still on its way (the socket sends it again after a reconnect, and the server answers it):
      // the controls stay off rather than offer moves of a table that is about to change.
      if (socket.pending(id)) {
        busyTimer = setTimeout(giveUp, 4000);
        return;
      }
      if (st.busy === id) set({ busy: null, ...undoProvisional() });
    }, 4000);
    if (action.card || action.cards) playSoundAfterPaint('card');
    else if (action.type === 'take') playSoundAfterPaint('take');
  }

  async function join(seat) {
    set({ joinError: '', rematchError: '' });
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
      const text = await refusalText(failure);
      set({ joinError: text, rematchError: st.table && st.table.status === 'finished' ? text : st.rematchError });
    }
  }

  async function joinAsGuest(event) {
    event.preventDefault();
    const input = event.target.querySelector('input[name=guest-name]');
    set({ guestName: input.value.trim(), joinError: '' });
    try {
      await playAsGuest(st.guestName);
      await post(`/api/tables/${encodeURIComponent(code)}/join`, {});
    } catch (failure) {
      const fields = failure.fieldErrors ? failure.fieldErrors() : {};
      set({ joinError: fields.name ? t('auth.bad_name') : errorText(failure) });
    }
    socket.reconnectNow(); // the new session cookie identifies us at the handshake
  }

  async function tableCall(path, body) {
    if (path === 'rematch') set({ rematchError: '' });
    try {
      await post(`/api/tables/${encodeURIComponent(code)}/${path}`, body);
      return true;
    } catch (failure) {
      if (path === 'rematch') {
        // Refused (e.g. the pair's daily coin cap): said on the results, where the button was.
        set({ rematchError: await refusalText(failure) });
      } else {
        toast(errorText(failure), 'error');
      }
      return false;
    }
  }

  /** Leave: in a running match a dialog says what it costs (the stake, or the match); then the lobby. */
  async function leave() {
    if (inRunningMatch()) {
      const stake = st.table.rules.stake;
      const ok = await confirmDialog({
        id: 'leave-dialog',
        title: t('leave.title'),
        text: stake > 0 ? t('leave.stake_lost', { coins: formatNumber(stake) }) : t('leave.match_lost'),
        confirm: t('leave.confirm'),
        cancel: t('leave.stay'),
        danger: true,
      });
      if (!ok) return;
    }
    guard.stop(); // asked already: the way to the lobby must not ask again
    const left = await tableCall('leave', {});
    refreshMe();
    if (left) navigate('#/');
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

  /** The player's own area: his row (seat and action bar, the part `meRow`) and his hand (`hand`). */
  function myArea() {
    const deciding = decidingSeats().includes(st.seat);
    const may = deciding && mayOnlySeats().includes(st.seat);
    return h('div', { class: ['me-area', deciding && 'my-turn', deciding && (may ? 'may-act' : 'must-act')], id: 'me-area' }, h('div', { class: 'me-row' }, meRow.el), st.view ? hand.el : null);
  }

  /** The seat and the action bar, drawn from the view they select (`shown`: while a move drawn ahead
   * is on its way, the view it was drawn from, whose buttons `busy` switches off). */
  function myRow() {
    const view = shown(st);
    const deciding = decidingSeats().includes(st.seat);
    const may = deciding && mayOnlySeats().includes(st.seat);
    const mine = seatBox(st.table.seats[st.seat], view ? view.players[st.seat] : null, { me: true, deciding });
    if (may) mine.classList.add('may');
    return [mine, view && view.phase !== 'over' ? actionBar(game, view) : null];
  }

  /** The action bar's buttons follow `busy` where they are (a move drawn ahead does not redraw it). */
  function busyButtons() {
    const disabled = Boolean(st.busy) || st.conn !== 'open';
    for (const button of container.querySelectorAll('#actions button')) if (button.disabled !== disabled) button.disabled = disabled;
  }

  // A tap is a press and a release on the same element. An update that redraws the page between
  // the two replaces that element, and the browser then makes no click of it: the tap is lost (a
  // bot's rematch vote arriving under the finger did exactly that). So while a pointer is down the
  // drawing waits (the store keeps what changed), and it runs right after the click the release
  // makes; a press held for ten seconds lets it through (a release the page never heard of).
  let pressing = null; // the timer that ends a long press, while a pointer is down on the page
  const press = () => {
    clearTimeout(pressing);
    pressing = setTimeout(release, 10000);
  };
  const release = () => {
    if (pressing === null) return;
    clearTimeout(pressing);
    pressing = null;
    setTimeout(store.flush, 0);
  };
  store.holdWhile(() => pressing !== null);
  container.addEventListener('pointerdown', press, true);
  window.addEventListener('pointerup', release, true);
  window.addEventListener('pointercancel', release, true);

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
        // "1:59" is wider than the ring: drawn as a pill (app.css), not cut by the ring's edge.
        const long = counter.textContent.length > 2;
        if (counter.hasAttribute('data-long') !== long) counter.toggleAttribute('data-long', long);
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
    placeLog();
    const rematch = container.querySelector('#rematch-countdown');
    if (rematch && st.rematchAt !== null) setText(rematch, t('rematch.time_left', { time: clockText(st.rematchAt - now) }));
    chat.tick();
  }

  /** Below the wide layout the open log drops from its button over the felt: it keeps between the
   * opponents and the player's own row (`--log-top`, `--log-room` on the page), so that it hides
   * neither an opponent's turn nor the player's controls. */
  function placeLog() {
    const panel = container.querySelector('#log-panel');
    if (!panel || !panel.open || LOG_BESIDE.matches || !container.classList.contains('in-match')) return;
    const opponents = container.querySelector('#opponents');
    const mine = container.querySelector('#me-area');
    const top = Math.round(opponents ? opponents.getBoundingClientRect().bottom + 4 : container.getBoundingClientRect().top);
    const bottom = Math.round(mine ? mine.getBoundingClientRect().top - 4 : window.innerHeight - 8);
    const topText = `${top}px`;
    const roomText = `${Math.max(0, bottom - top)}px`;
    if (container.style.getPropertyValue('--log-top') !== topText) container.style.setProperty('--log-top', topText);
    if (container.style.getPropertyValue('--log-room') !== roomText) container.style.setProperty('--log-room', roomText);
  }

  const ticker = setInterval(tick, 250);
  const keys = (event) => {
    if (event.key === 'Escape' && st.selection.length) set({ selection: [] });
  };
  document.addEventListener('keydown', keys);
  // Who the player is (not his balance, which the header shows): a new name or kind redraws the parts.
  const userKey = () => {
    const me = currentUser();
    return me ? `${me.kind}:${me.name}` : '';
  };
  let lastUser = userKey();
  const offUser = onSignInChange(() => {
    const key = userKey();
    if (key === lastUser) return;
    lastUser = key;
    set({ user: st.user + 1 });
  });
  const offMute = onMuteChange(() => set({ muted: isMuted() }));
  // Crossing into or out of the wide layout (a rotated tablet, a resized window) opens the log beside
  // the felt or folds it back into its button, so that it never covers the table unasked.
  const logLayout = () => set({ logOpen: LOG_BESIDE.matches });
  LOG_BESIDE.addEventListener('change', logLayout);
  socket.start();
  store.invalidate();

  return {
    relabel() {
      set({ lang: st.lang + 1 });
      chat.relabel();
    },
    unmount() {
      socket.stop();
      guard.stop();
      ready.stop();
      chat.stop();
      clearInterval(ticker);
      clearTimeout(busyTimer);
      document.removeEventListener('keydown', keys);
      container.removeEventListener('pointerdown', press, true);
      window.removeEventListener('pointerup', release, true);
      window.removeEventListener('pointercancel', release, true);
      clearTimeout(pressing);
      offUser();
      offMute();
      LOG_BESIDE.removeEventListener('change', logLayout);
      setSlimHeader(false);
      document.body.classList.remove('match-running');
      setPageTitle(null);
      replaceKeepingFocus(container, []);
    },
  };
}
