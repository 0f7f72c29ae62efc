// Provably fair deals in the browser (docs/fairness.md): the client seed the player contributes, the
// recomputation of a finished match's commitment and deck with WebCrypto, and the check that the cards
// its replay deals and draws are that deck's.

export const ALGORITHM = 'durak-peak/v1';
const encoder = new TextEncoder();

export function toHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export function fromHex(text) {
  if (typeof text !== 'string' || text.length % 2 || /[^0-9a-fA-F]/.test(text)) throw new Error('not hex');
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** 128 random bits from crypto.getRandomValues, as the 32 hex digits the server expects. */
export function newClientSeed() {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}

export function isClientSeed(text) {
  return /^[0-9a-fA-F]{32}$/.test(text);
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function header(table, matchNumber) {
  const code = encoder.encode(table);
  const number = new Uint8Array(4);
  new DataView(number.buffer).setUint32(0, matchNumber);
  return concat(encoder.encode(ALGORITHM), [code.length], code, number);
}

async function hmacKey(secret) {
  return crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

/** The base order: clubs, diamonds, hearts, spades, each from the deck's lowest rank to the ace. */
export function baseOrder(size) {
  const low = { 24: 9, 36: 6, 52: 2 }[size];
  const names = { 11: 'J', 12: 'Q', 13: 'K', 14: 'A' };
  const cards = [];
  for (const suit of 'cdhs') for (let rank = low; rank <= 14; rank += 1) cards.push((names[rank] || String(rank)) + suit);
  return cards;
}

/** The commitment and the deck a published `fairness` object stands for, recomputed. */
export async function recompute(fairness) {
  const serverSeed = fromHex(fairness.server_seed);
  const head = header(fairness.table, fairness.match_number);
  const commitment = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', concat(head, serverSeed))));
  const seeds = fairness.client_seeds.map((seed) => fromHex(seed));
  const message = concat(head, [fairness.deck_size, seeds.length], ...seeds.map((seed) => concat([seed.length], seed)));
  const key = new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey(serverSeed), message));
  const streamKey = await hmacKey(key);
  let block = new Uint8Array(0);
  let offset = 0;
  let counter = 0;
  async function nextByte() {
    if (offset >= block.length) {
      const count = new Uint8Array(8);
      new DataView(count.buffer).setBigUint64(0, BigInt(counter));
      counter += 1;
      block = new Uint8Array(await crypto.subtle.sign('HMAC', streamKey, count));
      offset = 0;
    }
    offset += 1;
    return block[offset - 1];
  }
  async function uniform(bound) {
    const limit = 256 - (256 % bound);
    for (;;) {
      const byte = await nextByte();
      if (byte < limit) return byte % bound;
    }
  }
  const deck = baseOrder(fairness.deck_size);
  for (let i = deck.length - 1; i > 0; i -= 1) {
    const j = await uniform(i + 1);
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  return { commitment, deck };
}

/**
 * The replay (GET /api/matches/{id}/replay: a position after the deal and after every action, with
 * every hand) against the deck (docs/fairness.md, "The replay against the deck"): the hands as dealt,
 * the turned trump, and every card drawn from the stock, in the deck's order. null when it checks
 * out, else what differs.
 */
export function checkReplay(deck, views) {
  try {
    return replayProblem(deck.map(String), views);
  } catch (failure) {
    return `cannot read the replay (${failure.message || failure})`;
  }
}

function replayProblem(cards, views) {
  if (!Array.isArray(views) || !views.length) return 'the replay is empty';
  const first = views[0];
  const seats = Number(first.rules.seats);
  const dealer = Number(first.dealer);
  const dealt = 6 * seats;
  if (Number(first.rules.deck) !== cards.length || first.hands.length !== seats || dealt > cards.length) {
    return `a ${first.rules.deck}-card deal for ${seats} seats does not fit a ${cards.length}-card deck`;
  }
  const hands = Array.from({ length: seats }, () => new Set());
  for (let index = 0; index < dealt; index += 1) hands[(dealer + 1 + index) % seats].add(cards[index]);
  let trump;
  let stock;
  if (dealt === cards.length) {
    trump = cards[dealt - 1];
    stock = [];
  } else {
    trump = cards[dealt];
    stock = first.rules.preset === 'durac1993' ? cards.slice(dealt) : [...cards.slice(dealt + 1), cards[dealt]];
  }
  for (let seat = 0; seat < seats; seat += 1) {
    const shown = new Set(first.hands[seat]);
    if (shown.size !== hands[seat].size || [...shown].some((card) => !hands[seat].has(card))) return `seat ${seat} was not dealt the deck's cards`;
  }
  if (first.trump_card !== trump) return `the turned trump is ${first.trump_card}, the deck turns ${trump}`;
  if (Number(first.stock) !== stock.length) return `the stock holds ${first.stock} cards after the deal, the deck leaves ${stock.length}`;
  for (let step = 1; step < views.length; step += 1) {
    const problem = stepProblem(views[step - 1], views[step], stock);
    if (problem) return `position ${step}: ${problem}`;
  }
  return null;
}

// One action: what a hand gains comes from the table or another hand (to the defender, picking the
// bout up), or else from the stock, in order; no card leaves play but into the discard pile.
function stepProblem(before, after, stock) {
  const tableBefore = tableCards(before);
  const tableAfter = tableCards(after);
  const inHandsBefore = new Set(before.hands.flat());
  const seen = new Set([...tableBefore, ...inHandsBefore]);
  const gained = before.hands.map((hand, seat) => new Set(after.hands[seat].filter((card) => !hand.includes(card))));
  const backToStock = new Set();
  if (before.trump_card !== after.trump_card) {
    const turned = before.trump_card;
    const low = after.trump_card;
    const takers = gained.map((cards, seat) => (cards.has(turned) ? seat : -1)).filter((seat) => seat >= 0);
    if (!stock.includes(turned) || takers.length !== 1 || !before.hands[takers[0]].includes(low)) return `the turned trump changed from ${turned} to ${low} without an exchange`;
    stock[stock.indexOf(turned)] = low;
    gained[takers[0]].delete(turned);
    backToStock.add(low);
  }
  const defender = before.defender === undefined ? null : before.defender;
  for (let seat = 0; seat < gained.length; seat += 1) {
    const picked = [...gained[seat]].filter((card) => seen.has(card)).sort();
    if (picked.length && seat !== defender) return `seat ${seat} got ${picked.join(' ')} from the table or another hand, not as the defender`;
  }
  const fromNowhere = [...tableAfter].filter((card) => !tableBefore.has(card) && !inHandsBefore.has(card)).sort();
  if (fromNowhere.length) return `${fromNowhere.join(' ')} came onto the table from no hand`;
  const count = stock.length - Number(after.stock);
  if (count < 0) return `the stock grew from ${stock.length} to ${after.stock} cards`;
  const drawn = stock.slice(0, count);
  const fromStock = gained.map((cards) => [...cards].filter((card) => !seen.has(card)));
  const all = fromStock.flat();
  if (all.length !== drawn.length || all.some((card) => !drawn.includes(card))) return `the hands drew ${all.join(' ') || 'nothing'}, the deck's next cards are ${drawn.join(' ') || 'none'}`;
  const inPlayAfter = new Set([...tableAfter, ...after.hands.flat()]);
  const left = [...seen].filter((card) => !inPlayAfter.has(card) && !backToStock.has(card)).sort();
  const discarded = Number(after.discard) - Number(before.discard);
  if (discarded !== left.length) return `${left.join(' ') || 'no card'} left play, but the discard pile grew by ${discarded}`;
  const fromHand = left.filter((card) => !tableBefore.has(card));
  const lastCover = fromHand.length === 1 && defender !== null && before.hands[defender].includes(fromHand[0]);
  if (fromHand.length && !(lastCover && tableBefore.size && !tableAfter.size)) return `${fromHand.join(' ')} went from a hand to the discard pile without being played`;
  const runs = [];
  for (let seat = 0; seat < fromStock.length; seat += 1) {
    if (!fromStock[seat].length) continue;
    const places = fromStock[seat].map((card) => drawn.indexOf(card)).sort((a, b) => a - b);
    if (places[places.length - 1] - places[0] + 1 !== places.length) return `seat ${seat} drew cards that are not consecutive in the deck`;
    runs.push([places[0], seat]);
  }
  const order = runs.sort((a, b) => a[0] - b[0]).map(([, seat]) => seat);
  if (order.length > 1 && before.attacker !== null && before.attacker !== undefined && before.defender !== null && before.defender !== undefined) {
    const n = before.hands.length;
    const rules = [before.attacker];
    for (let step = 1; step < n; step += 1) {
      const seat = (before.defender + step) % n;
      if (seat !== before.attacker && seat !== before.defender) rules.push(seat);
    }
    rules.push(before.defender);
    const expected = rules.filter((seat) => order.includes(seat));
    if (expected.join() !== order.join()) return `the seats drew in the order ${order.join(', ')}, the rules say ${expected.join(', ')}`;
  }
  stock.splice(0, count);
  return null;
}

function tableCards(view) {
  const cards = new Set();
  for (const pair of view.table) for (const card of [pair.attack, pair.cover]) if (card) cards.add(card);
  return cards;
}

/**
 * {ok, commitmentOk, deckOk, replayOk, replayProblem, deck, commitment, error}: the published record
 * against the recomputation, and (given `views`, the replay) the game against the recomputed deck.
 */
export async function verifyDeal(fairness, views = null) {
  try {
    if (!fairness || fairness.algorithm !== ALGORITHM) throw new Error(`unknown algorithm ${fairness && fairness.algorithm}`);
    if (!fairness.server_seed) throw new Error('the server seed is not revealed');
    const { commitment, deck } = await recompute(fairness);
    const commitmentOk = commitment === String(fairness.commitment).toLowerCase();
    const deckOk = Array.isArray(fairness.deck) && deck.join(' ') === fairness.deck.join(' ');
    const replayProblem = views === null ? 'the replay was not given' : checkReplay(deck, views);
    const replayOk = replayProblem === null;
    return { ok: commitmentOk && deckOk && replayOk, commitmentOk, deckOk, replayOk, replayProblem, commitment, deck, error: null };
  } catch (failure) {
    return { ok: false, commitmentOk: false, deckOk: false, replayOk: false, replayProblem: null, commitment: null, deck: null, error: String(failure.message || failure) };
  }
}
