// Table sounds, synthesized with WebAudio (no downloaded files): card played, your turn, the last
// seconds of the timer, take, beaten, win, lose. Nothing plays before the first user gesture
// (browsers refuse audio before one anyway); the mute choice is remembered in localStorage.

const MUTE_KEY = 'durak.muted';
let audio = null;
let gestured = false;
const muteListeners = new Set();

function noteGesture() {
  gestured = true;
  for (const kind of ['pointerdown', 'keydown', 'touchstart']) window.removeEventListener(kind, noteGesture, true);
}
for (const kind of ['pointerdown', 'keydown', 'touchstart']) window.addEventListener(kind, noteGesture, true);

export function isMuted() {
  try {
    return localStorage.getItem(MUTE_KEY) === '1';
  } catch {
    return false;
  }
}

export function setMuted(muted) {
  try {
    localStorage.setItem(MUTE_KEY, muted ? '1' : '0');
  } catch {
    /* private mode: lasts for this page only */
  }
  for (const listener of muteListeners) listener(muted);
}

export function onMuteChange(listener) {
  muteListeners.add(listener);
  return () => muteListeners.delete(listener);
}

/** How many sounds were started on this page (the tests read it: none before a gesture). */
let soundsPlayed = 0;

function context() {
  if (!audio) {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return null;
    audio = new Context();
  }
  if (audio.state === 'suspended') audio.resume();
  return audio;
}

/** One enveloped oscillator note: `at` seconds from now, `length` seconds long. */
function note(ctx, { freq, to = freq, at = 0, length = 0.12, type = 'triangle', gain = 0.18 }) {
  const start = ctx.currentTime + at;
  const osc = ctx.createOscillator();
  const amp = ctx.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, start);
  if (to !== freq) osc.frequency.exponentialRampToValueAtTime(to, start + length);
  amp.gain.setValueAtTime(0.0001, start);
  amp.gain.exponentialRampToValueAtTime(gain, start + 0.01);
  amp.gain.exponentialRampToValueAtTime(0.0001, start + length);
  osc.connect(amp).connect(ctx.destination);
  osc.start(start);
  osc.stop(start + length + 0.02);
}

/** A short filtered noise burst: a card sliding on felt. */
function swish(ctx, { at = 0, length = 0.09, freq = 2400, gain = 0.25 } = {}) {
  const start = ctx.currentTime + at;
  const frames = Math.floor(ctx.sampleRate * length);
  const buffer = ctx.createBuffer(1, frames, ctx.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < frames; i++) data[i] = (Math.random() * 2 - 1) * (1 - i / frames);
  const source = ctx.createBufferSource();
  source.buffer = buffer;
  const filter = ctx.createBiquadFilter();
  filter.type = 'bandpass';
  filter.frequency.value = freq;
  const amp = ctx.createGain();
  amp.gain.value = gain;
  source.connect(filter).connect(amp).connect(ctx.destination);
  source.start(start);
}

const SOUNDS = {
  card: (ctx) => swish(ctx),
  turn: (ctx) => {
    note(ctx, { freq: 660, length: 0.12 });
    note(ctx, { freq: 990, at: 0.1, length: 0.18 });
  },
  tick: (ctx) => note(ctx, { freq: 1200, length: 0.05, type: 'square', gain: 0.06 }),
  take: (ctx) => note(ctx, { freq: 330, to: 160, length: 0.25, type: 'sawtooth', gain: 0.08 }),
  beaten: (ctx) => {
    swish(ctx, { freq: 1600, length: 0.16 });
    swish(ctx, { at: 0.07, freq: 1100, length: 0.16 });
  },
  win: (ctx) => [523, 659, 784, 1047].forEach((freq, i) => note(ctx, { freq, at: i * 0.09, length: 0.2 })),
  lose: (ctx) => [392, 330, 262].forEach((freq, i) => note(ctx, { freq, at: i * 0.14, length: 0.26, type: 'sine' })),
};

/** Play sound `name` unless muted or before the first gesture. */
export function playSound(name) {
  if (!gestured || isMuted() || !SOUNDS[name]) return;
  const ctx = context();
  if (!ctx) return;
  soundsPlayed += 1;
  document.documentElement.dataset.sounds = String(soundsPlayed);
  SOUNDS[name](ctx);
}

/** Play sound `name` once the frame being drawn is on the screen: a tap's own sound (a card played,
 * a take) waits for the picture of its move, whose frame it would otherwise delay (the first sound
 * of a page also starts the audio output, which takes a while on a phone). */
export function playSoundAfterPaint(name) {
  if (document.hidden) {
    playSound(name);
    return;
  }
  requestAnimationFrame(() => setTimeout(() => playSound(name), 0));
}
