// Provably fair deals in the browser (docs/fairness.md): the client seed the player contributes, and
// the recomputation of a finished match's commitment and deck with WebCrypto.

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

/** {ok, commitmentOk, deckOk, deck, commitment, error}: the published record against the recomputation. */
export async function verifyDeal(fairness) {
  try {
    if (!fairness || fairness.algorithm !== ALGORITHM) throw new Error(`unknown algorithm ${fairness && fairness.algorithm}`);
    if (!fairness.server_seed) throw new Error('the server seed is not revealed');
    const { commitment, deck } = await recompute(fairness);
    const commitmentOk = commitment === String(fairness.commitment).toLowerCase();
    const deckOk = Array.isArray(fairness.deck) && deck.join(' ') === fairness.deck.join(' ');
    return { ok: commitmentOk && deckOk, commitmentOk, deckOk, commitment, deck, error: null };
  } catch (failure) {
    return { ok: false, commitmentOk: false, deckOk: false, commitment: null, deck: null, error: String(failure.message || failure) };
  }
}
