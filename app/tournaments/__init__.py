"""Arena tournaments (docs/tournaments.md): the runner that opens the arena's tables
(``runner``). The pure rules (points, standings, the prize split, pairing) are ``app.arena``."""
