/*
 * The engine's compiled core: bitboard move generation for American checkers and an alpha-beta
 * search, as the CPython extension module game.engine._core (built in place by `make install`).
 *
 * Board: bit n - 1 stands for square n (1-32, docs/rules.md "Board and numbering"), as in
 * game/rules/bitboard.py. Square index i (0-31) lies on row i / 4 counted from White's crowning
 * row (squares 1-4); Black moves toward higher numbers. A position is (own, opp, kings, black):
 * the side to move's pieces, the other side's, the kings of both, and whether Black is to move.
 *
 * Rules (docs/rules.md): capture is compulsory, every capture route is completed and any route may
 * be chosen, a piece is never jumped twice and jumped pieces stay on the board until the route
 * ends, men move and capture forward only, a man that reaches its crowning row is crowned and the
 * move ends there. game/rules stays the truth: tests/engine/test_core_differential.py compares
 * every move list of this file with Position.legal_moves().
 *
 * The search follows game/engine/search.py (docs/engine.md, "The search"): iterative deepening,
 * principal-variation negamax with late-move reductions, a transposition table, killer and history
 * ordering, quiescence on captures, single-reply extension, draws by repetition and the forty-move
 * rule. The evaluation is game/engine/evaluate.py's, its weights settable from Python, or a learned
 * network loaded from a file (game/engine/network.bin; docs/engine.md "The learned evaluation").
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint32_t bb;

#define FULL 0xFFFFFFFFu
#define EVEN_ROWS 0x0F0F0F0Fu
#define ODD_ROWS 0xF0F0F0F0u
#define ROW_TOP 0x0000000Fu    /* squares 1-4: White crowns here */
#define ROW_BOTTOM 0xF0000000u /* squares 29-32: Black crowns here */

#define MAX_MOVES 96      /* moves of one position in the search (capture routes with one key count once) */
#define MAX_ROUTES 1024   /* capture routes of one position, every route (legal_moves, perft) */
#define MAX_ROUTE 16      /* squares of one capture route (at most 12 jumps + the start) */
#define MAX_PLY 192       /* plies below the root */
#define MAX_PATH 512      /* game history + search path */

#define WIN 30000
#define MATE_RANGE 1000
#define MAX_DEPTH 60
#define EXTEND_LIMIT 40
#define FORTY_MOVE_PLIES 80
#define CLOCK_EVERY 1023

static int NEIGH[4][32]; /* one diagonal step in direction d (0 up-left, 1 up-right, 2 down-left, 3 down-right) */
static int LAND[4][32];  /* two steps: where a jump lands, or -1 */
static bb STEP_EVEN[4], STEP_ODD[4], JUMP_FROM[4];
static const int SHIFT_EVEN[4] = {-4, -3, 4, 5};
static const int SHIFT_ODD[4] = {-5, -4, 3, 4};
static int DIST[32][32]; /* king steps between two squares */

static inline bb shl(bb x, int n) { return n >= 0 ? x << n : x >> -n; }
static inline int popc(bb x) { return __builtin_popcount(x); }
static inline int lsb(bb x) { return __builtin_ctz(x); }

static void coordinates(int i, int *row, int *col) {
    *row = i / 4;
    *col = 2 * (i % 4) + ((*row % 2 == 0) ? 1 : 0);
}

static int index_at(int row, int col) {
    if (row >= 0 && row < 8 && col >= 0 && col < 8 && (row + col) % 2 == 1) return row * 4 + col / 2;
    return -1;
}

static void init_geometry(void) {
    static const int dr[4] = {-1, -1, 1, 1}, dc[4] = {-1, 1, -1, 1};
    for (int d = 0; d < 4; d++) {
        STEP_EVEN[d] = STEP_ODD[d] = JUMP_FROM[d] = 0;
        for (int i = 0; i < 32; i++) {
            int r, c;
            coordinates(i, &r, &c);
            NEIGH[d][i] = index_at(r + dr[d], c + dc[d]);
            LAND[d][i] = index_at(r + 2 * dr[d], c + 2 * dc[d]);
            if (NEIGH[d][i] >= 0) {
                if ((i / 4) % 2 == 0) STEP_EVEN[d] |= 1u << i;
                else STEP_ODD[d] |= 1u << i;
            }
            if (LAND[d][i] >= 0) JUMP_FROM[d] |= 1u << i;
        }
    }
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 32; j++) {
            int ri, ci, rj, cj;
            coordinates(i, &ri, &ci);
            coordinates(j, &rj, &cj);
            int a = abs(ri - rj), b = abs(ci - cj);
            DIST[i][j] = a > b ? a : b;
        }
}

/* ---------------------------------------------------------------- move generation */

/* The side to move's pieces that have at least one jump. */
static inline bb jumpers(bb own, bb opp, bb kings, int black) {
    bb empty = ~(own | opp);
    bb down = black ? own : own & kings;
    bb up = black ? own & kings : own;
    bb result = 0, p;
    if (up) {
        p = up & JUMP_FROM[0] & (empty << 9);
        if (p) result |= p & ((STEP_EVEN[0] & (opp << 4)) | (STEP_ODD[0] & (opp << 5)));
        p = up & JUMP_FROM[1] & (empty << 7);
        if (p) result |= p & ((STEP_EVEN[1] & (opp << 3)) | (STEP_ODD[1] & (opp << 4)));
    }
    if (down) {
        p = down & JUMP_FROM[2] & (empty >> 7);
        if (p) result |= p & ((STEP_EVEN[2] & (opp >> 4)) | (STEP_ODD[2] & (opp >> 3)));
        p = down & JUMP_FROM[3] & (empty >> 9);
        if (p) result |= p & ((STEP_EVEN[3] & (opp >> 5)) | (STEP_ODD[3] & (opp >> 4)));
    }
    return result;
}

static inline int count_quiet(bb own, bb opp, bb kings, int black) {
    bb empty = ~(own | opp);
    bb down = black ? own : own & kings;
    bb up = black ? own & kings : own;
    int n = 0;
    if (up) {
        n += popc((((up & STEP_EVEN[0]) >> 4) | ((up & STEP_ODD[0]) >> 5)) & empty);
        n += popc((((up & STEP_EVEN[1]) >> 3) | ((up & STEP_ODD[1]) >> 4)) & empty);
    }
    if (down) {
        n += popc((((down & STEP_EVEN[2]) << 4) | ((down & STEP_ODD[2]) << 3)) & empty);
        n += popc((((down & STEP_EVEN[3]) << 5) | ((down & STEP_ODD[3]) << 4)) & empty);
    }
    return n;
}

/* One legal move as the position after it (mover's view: own = the mover's pieces). */
typedef struct {
    uint64_t key; /* from index | to index << 5 | captured mask << 10, as game/engine/movegen.py */
    bb own, opp, kings;
    int taken;    /* pieces captured */
    int irrev;    /* a capture or a man move: resets the forty-move count */
    int score;    /* ordering */
} Move;

/* A complete route, for Python: squares 1-32. */
typedef struct {
    uint64_t key;
    int len;                 /* squares in path */
    int ncap;                /* captured squares */
    int crowned;
    unsigned char path[MAX_ROUTE];
    unsigned char caps[MAX_ROUTE];
} Route;

enum { GEN_DEDUPE, GEN_ALL, GEN_ROUTES };

typedef struct {
    bb own, opp, kings, freesq, crown, from_bit;
    int from, man, black, mode, n, cap, overflow, depth;
    Move *out;
    Route *routes;
    unsigned char path[MAX_ROUTE];
    unsigned char caps[MAX_ROUTE];
} Gen;

static const int MAN_DIRS[2][2] = {{0, 1}, {2, 3}}; /* [black] */

static void emit_capture(Gen *g, int at, bb taken, int crowned) {
    uint64_t key = (uint64_t)g->from | ((uint64_t)at << 5) | ((uint64_t)taken << 10);
    if (g->mode == GEN_ROUTES) {
        if (g->n >= g->cap) { g->overflow = 1; return; }
        Route *r = &g->routes[g->n++];
        r->key = key;
        r->len = g->depth + 1;
        r->ncap = g->depth;
        r->crowned = crowned;
        memcpy(r->path, g->path, (size_t)r->len);
        memcpy(r->caps, g->caps, (size_t)r->ncap);
        return;
    }
    if (g->mode == GEN_DEDUPE)
        for (int i = 0; i < g->n; i++)
            if (g->out[i].key == key) return;
    if (g->n >= g->cap) { g->overflow = 1; return; }
    bb to_bit = 1u << at;
    bb nk = g->kings & ~taken;
    if (nk & g->from_bit) nk = (nk & ~g->from_bit) | to_bit;
    else if (crowned) nk |= to_bit;
    Move *m = &g->out[g->n++];
    m->key = key;
    m->own = (g->own & ~g->from_bit) | to_bit;
    m->opp = g->opp & ~taken;
    m->kings = nk;
    m->taken = popc(taken);
    m->irrev = 1;
    m->score = 0;
}

static void jump_from(Gen *g, int at, bb taken) {
    int extended = 0;
    int count = g->man ? 2 : 4;
    for (int k = 0; k < count; k++) {
        int d = g->man ? MAN_DIRS[g->black][k] : k;
        int land = LAND[d][at];
        if (land < 0) continue;
        bb over_bit = 1u << NEIGH[d][at], land_bit = 1u << land;
        if ((g->opp & over_bit) && !(taken & over_bit) && (g->freesq & land_bit)) {
            extended = 1;
            int depth = g->depth;
            g->caps[depth] = (unsigned char)(NEIGH[d][at] + 1);
            g->path[depth + 1] = (unsigned char)(land + 1);
            g->depth = depth + 1;
            if (g->man && (land_bit & g->crown)) emit_capture(g, land, taken | over_bit, 1);
            else jump_from(g, land, taken | over_bit);
            g->depth = depth;
        }
    }
    if (!extended && taken) emit_capture(g, at, taken, 0);
}

/* The legal moves of a position into out (GEN_DEDUPE: capture routes with the same key once;
 * GEN_ALL: every route, for perft) or routes (GEN_ROUTES). Returns the count; *captures is set
 * when the moves are captures. cap: room in out or routes (at least 64: quiet moves never overflow);
 * *overflow (when not NULL) is set when more were found (then some are lost). */
static int generate(bb own, bb opp, bb kings, int black, int mode, Move *out, Route *routes, int cap,
                    int *captures, int *overflow) {
    Gen g;
    g.cap = cap;
    g.own = own;
    g.opp = opp;
    g.kings = kings;
    g.black = black;
    g.mode = mode;
    g.n = 0;
    g.overflow = 0;
    g.out = out;
    g.routes = routes;
    g.crown = black ? ROW_BOTTOM : ROW_TOP;
    bb empty = ~(own | opp);
    bb starts = jumpers(own, opp, kings, black);
    if (starts) {
        *captures = 1;
        while (starts) {
            int from = lsb(starts);
            starts &= starts - 1;
            g.from = from;
            g.from_bit = 1u << from;
            g.man = !(kings & g.from_bit);
            g.freesq = empty | g.from_bit;
            g.depth = 0;
            g.path[0] = (unsigned char)(from + 1);
            jump_from(&g, from, 0);
        }
        if (overflow) *overflow = g.overflow;
        return g.n;
    }
    *captures = 0;
    bb pieces_by_dir[4];
    bb men_dirs = black ? own : own & kings; /* pieces that may step down (2, 3) */
    bb up_dirs = black ? own & kings : own;  /* pieces that may step up (0, 1) */
    pieces_by_dir[0] = pieces_by_dir[1] = up_dirs;
    pieces_by_dir[2] = pieces_by_dir[3] = men_dirs;
    int order[4];
    /* Men's directions first, then the kings' backward ones (the order only matters for ordering). */
    if (black) { order[0] = 2; order[1] = 3; order[2] = 0; order[3] = 1; }
    else { order[0] = 0; order[1] = 1; order[2] = 2; order[3] = 3; }
    for (int k = 0; k < 4; k++) {
        int d = order[k];
        bb pieces = pieces_by_dir[d];
        if (!pieces) continue;
        for (int parity = 0; parity < 2; parity++) {
            bb movers = pieces & (parity ? STEP_ODD[d] : STEP_EVEN[d]);
            int shift = parity ? SHIFT_ODD[d] : SHIFT_EVEN[d];
            bb targets = shl(movers, shift) & empty;
            while (targets) {
                int to = lsb(targets);
                targets &= targets - 1;
                int from = to - shift;
                bb to_bit = 1u << to, from_bit = 1u << from, moved = to_bit | from_bit;
                int king = (kings & from_bit) != 0;
                if (mode == GEN_ROUTES) {
                    Route *r = &routes[g.n++];
                    r->key = (uint64_t)from | ((uint64_t)to << 5);
                    r->len = 2;
                    r->ncap = 0;
                    r->crowned = !king && (to_bit & g.crown);
                    r->path[0] = (unsigned char)(from + 1);
                    r->path[1] = (unsigned char)(to + 1);
                    continue;
                }
                Move *m = &out[g.n++];
                m->key = (uint64_t)from | ((uint64_t)to << 5);
                m->own = own ^ moved;
                m->opp = opp;
                m->taken = 0;
                m->score = 0;
                if (king) { m->kings = kings ^ moved; m->irrev = 0; }
                else { m->kings = (to_bit & g.crown) ? kings | to_bit : kings; m->irrev = 1; }
            }
        }
    }
    if (overflow) *overflow = 0;
    return g.n; /* at most 12 pieces x 4 steps: never beyond 48 */
}

static uint64_t perft(bb own, bb opp, bb kings, int black, int depth) {
    if (depth <= 0) return 1;
    if (depth == 1 && !jumpers(own, opp, kings, black)) return (uint64_t)count_quiet(own, opp, kings, black);
    Move moves[MAX_ROUTES];
    int captures, overflow;
    int n = generate(own, opp, kings, black, GEN_ALL, moves, NULL, MAX_ROUTES, &captures, &overflow);
    if (depth == 1) return (uint64_t)n;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) total += perft(moves[i].opp, moves[i].own, moves[i].kings, !black, depth - 1);
    return total;
}

/* ---------------------------------------------------------------- evaluation */

enum {
    W_MAN, W_KING, W_TEMPO_OPENING, W_TEMPO_EARLY, W_TEMPO_MIDDLE, W_TEMPO_LATE, W_ROW5, W_ROW6, W_ROW7,
    W_BRIDGE, W_BACK, W_CENTRE, W_INNER, W_KING_CENTRE, W_KING_EDGE, W_TRADE, W_HUNT, W_COUNT
};

static const char *WEIGHT_NAMES[W_COUNT] = {
    "man", "king", "tempo_opening", "tempo_early", "tempo_middle", "tempo_late", "row5", "row6", "row7",
    "bridge", "back", "centre", "inner", "king_centre", "king_edge", "trade", "hunt",
};
/* Tuned by bench/texel.py (docs/engine.md, "The evaluation"); game/engine/evaluate.py's WEIGHTS are the same. */
static const int DEFAULT_WEIGHTS[W_COUNT] = {100, 130, -5, -2, 0, 3, -10, 1, 0, 35, -8, -4, -5, 5, 1, 40, 6};
static int current_weights[W_COUNT];

#define SQ(n) (1u << ((n) - 1))
#define BLACK_BRIDGE (SQ(1) | SQ(3))
#define BLACK_BACK (SQ(2) | SQ(4))
#define WHITE_BRIDGE (SQ(30) | SQ(32))
#define WHITE_BACK (SQ(29) | SQ(31))
#define CENTRE (SQ(14) | SQ(15) | SQ(18) | SQ(19))
#define INNER (SQ(10) | SQ(11) | SQ(22) | SQ(23))
#define EDGE (SQ(1) | SQ(2) | SQ(3) | SQ(4) | SQ(5) | SQ(12) | SQ(13) | SQ(20) | SQ(21) | SQ(28) | SQ(29) | \
              SQ(30) | SQ(31) | SQ(32))
#define ROW(r) (0xFu << (4 * (r)))

static int hunt_distance(bb hunters, bb targets) {
    int total = 0;
    while (hunters) {
        int k = lsb(hunters);
        hunters &= hunters - 1;
        int best = 99;
        bb t = targets;
        while (t) {
            int j = lsb(t);
            t &= t - 1;
            if (DIST[k][j] < best) best = DIST[k][j];
        }
        total += best;
    }
    return total;
}

/* The static evaluation of game/engine/evaluate.py with the weights w, for the side to move. */
static int evaluate(bb own, bb opp, bb kings, int black, const int *w) {
    bb b = black ? own : opp, wt = black ? opp : own;
    bb bm = b & ~kings, wm = wt & ~kings, bk = b & kings, wk = wt & kings;
    int n_bm = popc(bm), n_wm = popc(wm), n_bk = popc(bk), n_wk = popc(wk);
    int pieces = n_bm + n_wm + n_bk + n_wk;
    int material = w[W_MAN] * (n_bm - n_wm) + w[W_KING] * (n_bk - n_wk);
    int score = material;

    int tempo = pieces >= 20 ? w[W_TEMPO_OPENING] : pieces > 12 ? w[W_TEMPO_EARLY]
              : pieces > 8 ? w[W_TEMPO_MIDDLE] : w[W_TEMPO_LATE];
    /* Rows advanced: row r of a Black man (r = 1..6; none stands on row 7, a man there is a king) and
     * 7 - r of a White man (none on row 0), summed bit by bit of r: rows with r & 1, r & 2, r & 4. */
    if (tempo) {
        int rows_b = popc(bm & 0xF0F0F0F0u) + 2 * popc(bm & 0xFF00FF00u) + 4 * popc(bm & 0xFFFF0000u);
        int rows_w = popc(wm & 0xF0F0F0F0u) + 2 * popc(wm & 0xFF00FF00u) + 4 * popc(wm & 0xFFFF0000u);
        score += tempo * (rows_b - (7 * n_wm - rows_w));
    }
    score += w[W_ROW5] * (popc(bm & ROW(4)) - popc(wm & ROW(3)));
    score += w[W_ROW6] * (popc(bm & ROW(5)) - popc(wm & ROW(2)));
    score += w[W_ROW7] * (popc(bm & ROW(6)) - popc(wm & ROW(1)));

    if (n_wm) score += w[W_BRIDGE] * popc(bm & BLACK_BRIDGE) + w[W_BACK] * popc(bm & BLACK_BACK);
    if (n_bm) score -= w[W_BRIDGE] * popc(wm & WHITE_BRIDGE) + w[W_BACK] * popc(wm & WHITE_BACK);

    score += w[W_CENTRE] * (popc(b & CENTRE) - popc(wt & CENTRE));
    score += w[W_INNER] * (popc(b & INNER) - popc(wt & INNER));
    if (bk | wk) {
        score += w[W_KING_CENTRE] * (popc(bk & CENTRE) - popc(wk & CENTRE));
        score -= w[W_KING_EDGE] * (popc(bk & EDGE) - popc(wk & EDGE));
    }
    if (material && pieces < 24) score += material * (24 - pieces) * w[W_TRADE] / 1000;
    if (pieces <= 10 && b && wt) {
        if (material > 0 && bk) score -= w[W_HUNT] * hunt_distance(bk, wt);
        else if (material < 0 && wk) score += w[W_HUNT] * hunt_distance(wk, b);
    }
    return black ? score : -score;
}

/* ---------------------------------------------------------------- endgame databases
 *
 * Every position with at most eg_max pieces (2..5) and its distance to the end, built by retrograde
 * analysis: pass 0 marks the positions without a legal move (lost at once); pass n (odd) marks as won
 * in n plies every open position with a move to a position lost in n - 1, pass n (even) marks as lost
 * in n plies every open position whose moves all lead to won positions. Captures lead to positions
 * with fewer pieces, which are in the same table. What stays open when two passes in a row find
 * nothing is a draw. The forty-move rule is not taken into account (as in published databases).
 *
 * Positions are stored from the side to move's point of view as if Black were to move (a White-to-
 * move position is mirrored: square n becomes 33 - n), so each is stored once. Index: the occupied
 * squares ranked as a combination (combinadic), times 4^k piece kinds (own man, own king, other man,
 * other king, in square order). A value byte: 0 open (while building), 1..253 plies to the end + 1
 * (odd plies: the side to move wins; even: it loses), DRAW, INVALID (a man on its crowning row).
 */

#define EG_MAX_PIECES 5
#define EG_DRAW 255
#define EG_INVALID 254
#define EG_MAX_PLIES 252

static uint64_t BINOM[33][EG_MAX_PIECES + 1];
static uint64_t EG_BASE[EG_MAX_PIECES + 2];
static unsigned char *eg_table; /* the loaded database (never freed once searches may read it) */
static int eg_max;              /* pieces it covers; 0: none loaded */

static void init_binomials(void) {
    for (int n = 0; n <= 32; n++) {
        BINOM[n][0] = 1;
        for (int k = 1; k <= EG_MAX_PIECES; k++) BINOM[n][k] = n == 0 ? 0 : BINOM[n - 1][k - 1] + BINOM[n - 1][k];
    }
    EG_BASE[1] = 0;
    for (int k = 1; k <= EG_MAX_PIECES; k++) EG_BASE[k + 1] = EG_BASE[k] + BINOM[32][k] * ((uint64_t)1 << (2 * k));
}

static inline bb rev32(bb x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
    return (x >> 16) | (x << 16);
}

/* The index of a position with 1..max_pieces pieces, or -1. */
static inline int64_t eg_index(bb own, bb opp, bb kings, int black, int max_pieces) {
    if (!black) { own = rev32(own); opp = rev32(opp); kings = rev32(kings); }
    bb occ = own | opp;
    int k = popc(occ);
    if (k < 1 || k > max_pieces) return -1;
    uint64_t rank = 0, kinds = 0;
    for (int i = 1; occ; i++) {
        int sq = lsb(occ);
        occ &= occ - 1;
        bb bit = 1u << sq;
        rank += BINOM[sq][i];
        kinds = kinds * 4 + (uint64_t)(((opp & bit) ? 2 : 0) | ((kings & bit) ? 1 : 0));
    }
    return (int64_t)(EG_BASE[k] + rank * ((uint64_t)1 << (2 * k)) + kinds);
}

/* The position of an index, with Black (the side to move) as own; false for a man on its crowning row. */
static int eg_position(uint64_t index, bb *own, bb *opp, bb *kings) {
    int k = 1;
    while (index >= EG_BASE[k + 1]) k++;
    uint64_t local = index - EG_BASE[k], kinds = local & (((uint64_t)1 << (2 * k)) - 1);
    uint64_t rank = local >> (2 * k);
    int squares[EG_MAX_PIECES];
    for (int i = k; i >= 1; i--) {
        int sq = i - 1;
        while (sq + 1 < 32 && BINOM[sq + 1][i] <= rank) sq++;
        squares[i - 1] = sq;
        rank -= BINOM[sq][i];
    }
    *own = *opp = *kings = 0;
    for (int j = 0; j < k; j++) {
        int kind = (int)((kinds >> (2 * (k - 1 - j))) & 3);
        bb bit = 1u << squares[j];
        if (kind & 2) *opp |= bit;
        else *own |= bit;
        if (kind & 1) *kings |= bit;
    }
    return !((*own & ~*kings & ROW_BOTTOM) || (*opp & ~*kings & ROW_TOP));
}

static inline int eg_value_of_child(const unsigned char *table, int max_pieces, const Move *m, int black) {
    return table[eg_index(m->opp, m->own, m->kings, !black, max_pieces)];
}

typedef struct {
    uint64_t positions, wins, losses, draws, invalid;
    int passes, longest;
} EgStats;

static int eg_build(unsigned char *table, int max_pieces, EgStats *st) {
    uint64_t size = EG_BASE[max_pieces + 1];
    memset(st, 0, sizeof(*st));
    memset(table, 0, size);
    Move moves[MAX_MOVES];
    int captures;
    for (uint64_t i = 0; i < size; i++) {
        bb own, opp, kings;
        if (!eg_position(i, &own, &opp, &kings)) { table[i] = EG_INVALID; continue; }
        if (!generate(own, opp, kings, 1, GEN_DEDUPE, moves, NULL, MAX_MOVES, &captures, NULL)) table[i] = 1;
    }
    int quiet = 0;
    for (int n = 1; n <= EG_MAX_PLIES && quiet < 2; n++) {
        uint64_t changed = 0;
        for (uint64_t i = 0; i < size; i++) {
            if (table[i]) continue;
            bb own, opp, kings;
            eg_position(i, &own, &opp, &kings);
            int k = generate(own, opp, kings, 1, GEN_DEDUPE, moves, NULL, MAX_MOVES, &captures, NULL);
            if (n & 1) {
                for (int j = 0; j < k; j++)
                    if (eg_value_of_child(table, max_pieces, &moves[j], 1) == n) { table[i] = (unsigned char)(n + 1); changed++; break; }
            } else {
                int all_won = 1;
                for (int j = 0; j < k && all_won; j++) {
                    int v = eg_value_of_child(table, max_pieces, &moves[j], 1);
                    all_won = v >= 1 && v <= EG_MAX_PLIES + 1 && ((v - 1) & 1);
                }
                if (all_won) { table[i] = (unsigned char)(n + 1); changed++; }
            }
        }
        st->passes = n;
        if (changed) { quiet = 0; st->longest = n; }
        else quiet++;
    }
    for (uint64_t i = 0; i < size; i++) {
        unsigned char v = table[i];
        if (v == 0) { table[i] = EG_DRAW; st->draws++; }
        else if (v == EG_INVALID) { st->invalid++; continue; }
        else if ((v - 1) & 1) st->wins++;
        else st->losses++;
        st->positions++;
    }
    return quiet >= 2 ? 0 : -1; /* -1: some end lies beyond EG_MAX_PLIES (its positions count as draws) */
}

/* Every position's value must follow from its moves' values; returns the number that do not. */
static uint64_t eg_verify(const unsigned char *table, int max_pieces) {
    uint64_t size = EG_BASE[max_pieces + 1], wrong = 0;
    Move moves[MAX_MOVES];
    int captures;
    for (uint64_t i = 0; i < size; i++) {
        bb own, opp, kings;
        int valid = eg_position(i, &own, &opp, &kings);
        unsigned char v = table[i];
        if (!valid) { wrong += v != EG_INVALID; continue; }
        int k = generate(own, opp, kings, 1, GEN_DEDUPE, moves, NULL, MAX_MOVES, &captures, NULL);
        int expected;
        if (!k) expected = 1;
        else {
            int best_win = -1, longest_loss = -1, draw = 0;
            for (int j = 0; j < k; j++) {
                int cv = eg_value_of_child(table, max_pieces, &moves[j], 1);
                if (cv == EG_DRAW) draw = 1;
                else if (cv == EG_INVALID || cv == 0) { best_win = -2; break; }
                else if (!((cv - 1) & 1)) { if (best_win < 0 || cv - 1 < best_win) best_win = cv - 1; }
                else if (cv - 1 > longest_loss) longest_loss = cv - 1;
            }
            if (best_win == -2) expected = -1;
            else if (best_win >= 0) expected = best_win + 2;     /* win in best_win + 1 plies */
            else if (draw) expected = EG_DRAW;
            else expected = longest_loss + 2;                   /* loss in longest_loss + 1 plies */
        }
        wrong += v != expected;
    }
    return wrong;
}

/* A database's value of a position: 0 when it is not covered. */
static inline int eg_lookup(const unsigned char *table, int max_pieces, bb own, bb opp, bb kings, int black) {
    if (!max_pieces || popc(own | opp) > max_pieces) return 0;
    int v = table[eg_index(own, opp, kings, black, max_pieces)];
    return v == EG_INVALID ? 0 : v;
}

static inline int eg_probe(bb own, bb opp, bb kings, int black) {
    return eg_lookup(eg_table, eg_max, own, opp, kings, black);
}

/* A database value as a search score at `ply`: a proved result, as the search's own (WIN - plies). */
static inline int eg_score(int v, int ply) {
    if (v == EG_DRAW) return 0;
    int plies = v - 1;
    return (plies & 1) ? WIN - (ply + plies) : (ply + plies) - WIN;
}

/* ---------------------------------------------------------------- the learned evaluation
 *
 * A small network with integer inference (game/engine/network.py reads the file, docs/engine.md
 * "The learned evaluation" says how it is trained). The position is seen from the side to move,
 * as if Black were to move (a White-to-move position is mirrored: square n becomes 33 - n). Inputs:
 * 128 features, own men, own kings, other men, other kings on the 32 squares. Then
 *   h1[i] = b1[i] + sum of w1[f][i] over the features f present              (int16, never overflows:
 *                                                                            the loader checks the bound)
 *   a1[i] = clamp(h1[i], 0, 127)
 *   h2[j] = b2[j] + sum over i of a1[i] * w2[j][i]                            (int32; w2 int8)
 *   a2[j] = clamp(h2[j] >> 6, 0, 127)
 *   out   = b3 + sum over j of a2[j] * w3[j], divided by 2^shift rounding down (hundredths of a man).
 * Every path (AVX2, SSSE3, plain C) computes exactly these integers: tests/engine/test_network.py
 * compares them with numpy's on 10,000 positions. */

#define NN_INPUTS 128
#define NN_MAX_H1 1024
#define NN_MAX_H2 64
#define NN_LIMIT 4000 /* the score is kept within +-NN_LIMIT, far from the win scores */

typedef struct {
    int h1, h2, shift;
    int16_t *w1;  /* [NN_INPUTS][h1] */
    int16_t *b1;  /* [h1] */
    int8_t *w2;   /* [h2][h1] */
    int32_t *b2;  /* [h2] */
    int32_t *w3;  /* [h2] */
    int32_t b3;
} Network;

static Network *network;  /* the loaded network (never freed once searches may read it); NULL: none */
static int nn_simd;       /* 2: AVX2, 1: SSSE3, 0: plain C (nn_simd_path below) */

static inline int floor_shift(int32_t x, int k) {
    return x >= 0 ? x >> k : -((-x + (1 << k) - 1) >> k);
}

/* The layers after the accumulator, plain C. */
static int nn_tail_c(const Network *n, const int16_t *acc) {
    uint8_t a1[NN_MAX_H1];
    for (int i = 0; i < n->h1; i++) a1[i] = (uint8_t)(acc[i] < 0 ? 0 : acc[i] > 127 ? 127 : acc[i]);
    int32_t out = n->b3;
    for (int j = 0; j < n->h2; j++) {
        const int8_t *w = n->w2 + (size_t)j * n->h1;
        int32_t s = n->b2[j];
        for (int i = 0; i < n->h1; i++) s += (int32_t)a1[i] * w[i];
        int32_t a = s < 0 ? 0 : s >> 6;
        out += (a > 127 ? 127 : a) * n->w3[j];
    }
    return floor_shift(out, n->shift);
}

static void nn_accumulate_c(const Network *n, const int *features, int count, int16_t *acc) {
    memcpy(acc, n->b1, sizeof(int16_t) * n->h1);
    for (int f = 0; f < count; f++) {
        const int16_t *w = n->w1 + (size_t)features[f] * n->h1;
        for (int i = 0; i < n->h1; i++) acc[i] = (int16_t)(acc[i] + w[i]);
    }
}

/* to = from + the rows of the features in add - the rows of those in sub. The sums wrap modulo 2^16
 * in every path, so the result is the from-scratch sum of the new features exactly, whatever the
 * order (the from-scratch sum itself never leaves the int16 range: the loader checks it). */
static void nn_update_c(const Network *n, const int16_t *from, int16_t *to, const int *add, int na, const int *sub,
                        int ns) {
    for (int i = 0; i < n->h1; i++) {
        uint16_t v = (uint16_t)from[i];
        for (int f = 0; f < na; f++) v = (uint16_t)(v + (uint16_t)n->w1[(size_t)add[f] * n->h1 + i]);
        for (int f = 0; f < ns; f++) v = (uint16_t)(v - (uint16_t)n->w1[(size_t)sub[f] * n->h1 + i]);
        to[i] = (int16_t)v;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NN_X86 1

/* h1 is a multiple of 32 (the loader checks it). */
__attribute__((target("avx2"))) static void nn_accumulate_avx2(const Network *n, const int *features, int count,
                                                                int16_t *acc) {
    for (int i = 0; i < n->h1; i += 16) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(n->b1 + i));
        for (int f = 0; f < count; f++)
            v = _mm256_add_epi16(v, _mm256_loadu_si256((const __m256i *)(n->w1 + (size_t)features[f] * n->h1 + i)));
        _mm256_storeu_si256((__m256i *)(acc + i), v);
    }
}

__attribute__((target("avx2"))) static void nn_update_avx2(const Network *n, const int16_t *from, int16_t *to,
                                                            const int *add, int na, const int *sub, int ns) {
    const int16_t *plus[32], *minus[32];
    for (int f = 0; f < na; f++) plus[f] = n->w1 + (size_t)add[f] * n->h1;
    for (int f = 0; f < ns; f++) minus[f] = n->w1 + (size_t)sub[f] * n->h1;
    if (na == 1 && ns == 1) { /* a step: one row in, one out */
        for (int i = 0; i < n->h1; i += 16) {
            __m256i v = _mm256_add_epi16(_mm256_load_si256((const __m256i *)(from + i)),
                                         _mm256_load_si256((const __m256i *)(plus[0] + i)));
            v = _mm256_sub_epi16(v, _mm256_load_si256((const __m256i *)(minus[0] + i)));
            _mm256_store_si256((__m256i *)(to + i), v);
        }
        return;
    }
    for (int i = 0; i < n->h1; i += 16) {
        __m256i v = _mm256_load_si256((const __m256i *)(from + i));
        for (int f = 0; f < na; f++) v = _mm256_add_epi16(v, _mm256_load_si256((const __m256i *)(plus[f] + i)));
        for (int f = 0; f < ns; f++) v = _mm256_sub_epi16(v, _mm256_load_si256((const __m256i *)(minus[f] + i)));
        _mm256_store_si256((__m256i *)(to + i), v);
    }
}

__attribute__((target("avx2"))) static int nn_tail_avx2(const Network *n, const int16_t *acc) {
    uint8_t a1[NN_MAX_H1] __attribute__((aligned(32)));
    const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi16(127), ones = _mm256_set1_epi16(1);
    for (int i = 0; i < n->h1; i += 32) {
        __m256i lo = _mm256_min_epi16(_mm256_max_epi16(_mm256_loadu_si256((const __m256i *)(acc + i)), zero), top);
        __m256i hi = _mm256_min_epi16(_mm256_max_epi16(_mm256_loadu_si256((const __m256i *)(acc + i + 16)), zero), top);
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi16(lo, hi), 0xD8);
        _mm256_store_si256((__m256i *)(a1 + i), packed);
    }
    /* Eight second-layer units at a time: their eight sums reduced together (hadd), clipped and weighed in
     * one vector. Integer sums, so the order changes nothing. */
    __m256i total = zero;
    int j = 0;
    for (; j + 8 <= n->h2; j += 8) {
        const int8_t *w = n->w2 + (size_t)j * n->h1;
        __m256i s[8];
        for (int k = 0; k < 8; k++) s[k] = zero;
        for (int i = 0; i < n->h1; i += 32) {
            __m256i a = _mm256_load_si256((const __m256i *)(a1 + i));
            for (int k = 0; k < 8; k++) {
                __m256i row = _mm256_loadu_si256((const __m256i *)(w + (size_t)k * n->h1 + i));
                s[k] = _mm256_add_epi32(s[k], _mm256_madd_epi16(_mm256_maddubs_epi16(a, row), ones));
            }
        }
        __m256i t0 = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
        __m256i t1 = _mm256_hadd_epi32(_mm256_hadd_epi32(s[4], s[5]), _mm256_hadd_epi32(s[6], s[7]));
        __m256i sums = _mm256_add_epi32(_mm256_permute2x128_si256(t0, t1, 0x20),
                                        _mm256_permute2x128_si256(t0, t1, 0x31));
        sums = _mm256_add_epi32(sums, _mm256_loadu_si256((const __m256i *)(n->b2 + j)));
        __m256i a2 = _mm256_min_epi32(_mm256_max_epi32(_mm256_srai_epi32(sums, 6), zero), _mm256_set1_epi32(127));
        total = _mm256_add_epi32(total, _mm256_mullo_epi32(a2, _mm256_loadu_si256((const __m256i *)(n->w3 + j))));
    }
    __m128i t4 = _mm_add_epi32(_mm256_castsi256_si128(total), _mm256_extracti128_si256(total, 1));
    t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0x4E));
    t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0xB1));
    int32_t out = n->b3 + _mm_cvtsi128_si32(t4);
    for (; j < n->h2; j++) {
        const int8_t *w = n->w2 + (size_t)j * n->h1;
        __m256i sum = _mm256_setzero_si256();
        for (int i = 0; i < n->h1; i += 32) {
            /* u8 x i8 pairs: at most 2 * 127 * 128 in magnitude, so the int16 sums never saturate */
            __m256i prod = _mm256_maddubs_epi16(_mm256_load_si256((const __m256i *)(a1 + i)),
                                                _mm256_loadu_si256((const __m256i *)(w + i)));
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(prod, ones));
        }
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
        int32_t s = n->b2[j] + _mm_cvtsi128_si32(s4);
        int32_t a = s < 0 ? 0 : s >> 6;
        out += (a > 127 ? 127 : a) * n->w3[j];
    }
    return floor_shift(out, n->shift);
}

__attribute__((target("ssse3"))) static void nn_accumulate_ssse3(const Network *n, const int *features, int count,
                                                                  int16_t *acc) {
    for (int i = 0; i < n->h1; i += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(n->b1 + i));
        for (int f = 0; f < count; f++)
            v = _mm_add_epi16(v, _mm_loadu_si128((const __m128i *)(n->w1 + (size_t)features[f] * n->h1 + i)));
        _mm_storeu_si128((__m128i *)(acc + i), v);
    }
}

__attribute__((target("ssse3"))) static void nn_update_ssse3(const Network *n, const int16_t *from, int16_t *to,
                                                              const int *add, int na, const int *sub, int ns) {
    for (int i = 0; i < n->h1; i += 8) {
        __m128i v = _mm_load_si128((const __m128i *)(from + i));
        for (int f = 0; f < na; f++)
            v = _mm_add_epi16(v, _mm_loadu_si128((const __m128i *)(n->w1 + (size_t)add[f] * n->h1 + i)));
        for (int f = 0; f < ns; f++)
            v = _mm_sub_epi16(v, _mm_loadu_si128((const __m128i *)(n->w1 + (size_t)sub[f] * n->h1 + i)));
        _mm_store_si128((__m128i *)(to + i), v);
    }
}

__attribute__((target("ssse3"))) static int nn_tail_ssse3(const Network *n, const int16_t *acc) {
    uint8_t a1[NN_MAX_H1] __attribute__((aligned(16)));
    const __m128i zero = _mm_setzero_si128(), top = _mm_set1_epi16(127), ones = _mm_set1_epi16(1);
    for (int i = 0; i < n->h1; i += 16) {
        __m128i lo = _mm_min_epi16(_mm_max_epi16(_mm_loadu_si128((const __m128i *)(acc + i)), zero), top);
        __m128i hi = _mm_min_epi16(_mm_max_epi16(_mm_loadu_si128((const __m128i *)(acc + i + 8)), zero), top);
        _mm_store_si128((__m128i *)(a1 + i), _mm_packus_epi16(lo, hi));
    }
    /* Four second-layer units at a time, their sums reduced together (hadd). */
    int32_t out = n->b3;
    int j = 0;
    for (; j + 4 <= n->h2; j += 4) {
        const int8_t *w = n->w2 + (size_t)j * n->h1;
        __m128i s[4] = {zero, zero, zero, zero};
        for (int i = 0; i < n->h1; i += 16) {
            __m128i a = _mm_load_si128((const __m128i *)(a1 + i));
            for (int k = 0; k < 4; k++) {
                __m128i row = _mm_loadu_si128((const __m128i *)(w + (size_t)k * n->h1 + i));
                s[k] = _mm_add_epi32(s[k], _mm_madd_epi16(_mm_maddubs_epi16(a, row), ones));
            }
        }
        int32_t sums[4];
        _mm_storeu_si128((__m128i *)sums, _mm_hadd_epi32(_mm_hadd_epi32(s[0], s[1]), _mm_hadd_epi32(s[2], s[3])));
        for (int k = 0; k < 4; k++) {
            int32_t v = n->b2[j + k] + sums[k];
            int32_t a = v < 0 ? 0 : v >> 6;
            out += (a > 127 ? 127 : a) * n->w3[j + k];
        }
    }
    for (; j < n->h2; j++) {
        const int8_t *w = n->w2 + (size_t)j * n->h1;
        __m128i sum = _mm_setzero_si128();
        for (int i = 0; i < n->h1; i += 16) {
            __m128i prod = _mm_maddubs_epi16(_mm_load_si128((const __m128i *)(a1 + i)),
                                             _mm_loadu_si128((const __m128i *)(w + i)));
            sum = _mm_add_epi32(sum, _mm_madd_epi16(prod, ones));
        }
        sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4E));
        sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xB1));
        int32_t s = n->b2[j] + _mm_cvtsi128_si32(sum);
        int32_t a = s < 0 ? 0 : s >> 6;
        out += (a > 127 ? 127 : a) * n->w3[j];
    }
    return floor_shift(out, n->shift);
}
#endif

static void nn_detect(void) {
    nn_simd = 0;
#ifdef NN_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) nn_simd = 2;
    else if (__builtin_cpu_supports("ssse3")) nn_simd = 1;
#endif
}

/* The features of a position from the side to move's view (at most 32). */
static inline int nn_features(bb own, bb opp, bb kings, int black, int *features) {
    if (!black) { own = rev32(own); opp = rev32(opp); kings = rev32(kings); }
    int count = 0;
    bb groups[4] = {own & ~kings, own & kings, opp & ~kings, opp & kings};
    for (int g = 0; g < 4; g++)
        for (bb x = groups[g]; x; x &= x - 1) features[count++] = 32 * g + lsb(x);
    return count;
}

/* The first layer's sums of the features, from scratch; simd as nn_simd. */
static void nn_accumulate(const Network *n, const int *features, int count, int16_t *acc, int simd) {
#ifdef NN_X86
    if (simd == 2) { nn_accumulate_avx2(n, features, count, acc); return; }
    if (simd == 1) { nn_accumulate_ssse3(n, features, count, acc); return; }
#endif
    (void)simd;
    nn_accumulate_c(n, features, count, acc);
}

/* The layers after the first, from its sums: the score for the side to move, within +-NN_LIMIT. */
static int nn_tail(const Network *n, const int16_t *acc, int simd) {
    int score;
#ifdef NN_X86
    if (simd == 2) score = nn_tail_avx2(n, acc);
    else if (simd == 1) score = nn_tail_ssse3(n, acc);
    else
#endif
    score = nn_tail_c(n, acc);
    return score > NN_LIMIT ? NN_LIMIT : score < -NN_LIMIT ? -NN_LIMIT : score;
}

/* The network's score of a position for the side to move, hundredths of a man, the first layer summed
 * from scratch (the reference the tests compare the search's incremental sums with); simd as nn_simd. */
static int nn_evaluate_with(const Network *n, bb own, bb opp, bb kings, int black, int simd) {
    int features[32];
    int count = nn_features(own, opp, kings, black, features);
    int16_t acc[NN_MAX_H1] __attribute__((aligned(32)));
    nn_accumulate(n, features, count, acc, simd);
    return nn_tail(n, acc, simd);
}

static inline int nn_evaluate(const Network *n, bb own, bb opp, bb kings, int black) {
    return nn_evaluate_with(n, own, opp, kings, black, nn_simd);
}

/* The first layer along a search path (NNUE-style): the position at each ply from the root and, for
 * each of the two views (0: Black to move, 1: White to move, the board turned), the first layer's
 * sums once computed. They are computed lazily, when a position is evaluated: from the deepest
 * ancestor whose sums of that view are known, adding and removing the rows of the features that
 * differ between each ply and the next (a step, a capture route's jumped pieces, a crowning), the
 * root's from scratch. Entering a ply (a new position there) forgets its sums. */
typedef struct {
    const Network *net;
    int simd;
    int16_t *acc;                     /* [MAX_PLY + 1][2][h1], 32-byte aligned */
    bb black[MAX_PLY + 1], white[MAX_PLY + 1], kings[MAX_PLY + 1];
    unsigned char known[MAX_PLY + 1][2];
} NnPath;

static int nn_path_open(NnPath *p, const Network *n, int simd) {
    p->net = n;
    p->simd = simd;
    size_t bytes = sizeof(int16_t) * (MAX_PLY + 1) * 2 * (size_t)n->h1; /* h1 % 32 == 0: rows stay aligned */
    p->acc = aligned_alloc(32, bytes);
    return p->acc ? 0 : -1;
}

static void nn_path_close(NnPath *p) {
    free(p->acc);
    p->acc = NULL;
}

static inline void nn_enter(NnPath *p, int ply, bb own, bb opp, bb kings, int black) {
    p->black[ply] = black ? own : opp;
    p->white[ply] = black ? opp : own;
    p->kings[ply] = kings;
    p->known[ply][0] = p->known[ply][1] = 0;
}

static inline int16_t *nn_acc(NnPath *p, int ply, int view) {
    return p->acc + ((size_t)ply * 2 + (size_t)view) * (size_t)p->net->h1;
}

/* The four feature groups of a position seen by a view (own men, own kings, other men, other kings;
 * the board turned for White), as bitboards of feature squares. */
static inline void nn_groups(bb black, bb white, bb kings, int view, bb *g) {
    if (view) {
        bb b = rev32(black), w = rev32(white), k = rev32(kings);
        g[0] = w & ~k; g[1] = w & k; g[2] = b & ~k; g[3] = b & k;
    } else {
        g[0] = black & ~kings; g[1] = black & kings; g[2] = white & ~kings; g[3] = white & kings;
    }
}

/* The first layer's sums of the position at `ply` seen by `view`. */
static const int16_t *nn_layer(NnPath *p, int ply, int view) {
    int q = ply;
    while (q > 0 && !p->known[q][view]) q--;
    if (!p->known[q][view]) {
        int features[32];
        int count = nn_features(view ? p->white[q] : p->black[q], view ? p->black[q] : p->white[q], p->kings[q],
                                !view, features);
        nn_accumulate(p->net, features, count, nn_acc(p, q, view), p->simd);
        p->known[q][view] = 1;
    }
    for (int r = q + 1; r <= ply; r++) {
        bb before[4], after[4];
        nn_groups(p->black[r - 1], p->white[r - 1], p->kings[r - 1], view, before);
        nn_groups(p->black[r], p->white[r], p->kings[r], view, after);
        int add[32], sub[32], na = 0, ns = 0;
        for (int g = 0; g < 4; g++) {
            for (bb x = after[g] & ~before[g]; x; x &= x - 1) add[na++] = 32 * g + lsb(x);
            for (bb x = before[g] & ~after[g]; x; x &= x - 1) sub[ns++] = 32 * g + lsb(x);
        }
        const int16_t *from = nn_acc(p, r - 1, view);
        int16_t *to = nn_acc(p, r, view);
#ifdef NN_X86
        if (p->simd == 2) nn_update_avx2(p->net, from, to, add, na, sub, ns);
        else if (p->simd == 1) nn_update_ssse3(p->net, from, to, add, na, sub, ns);
        else
#endif
        nn_update_c(p->net, from, to, add, na, sub, ns);
        p->known[r][view] = 1;
    }
    return nn_acc(p, ply, view);
}

/* The network's score of the position at `ply` (entered with nn_enter) for its side to move. */
static inline int nn_evaluate_at(NnPath *p, int ply, int black) {
    return nn_tail(p->net, nn_layer(p, ply, !black), p->simd);
}

/* ---------------------------------------------------------------- search */

static inline uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t position_hash(bb own, bb opp, bb kings, int black) {
    return mix64(((uint64_t)own << 32) | opp) ^ mix64(((uint64_t)kings << 1) | (uint64_t)(black ? 1 : 0));
}

enum { EXACT, LOWER, UPPER };

typedef struct {
    uint64_t hash;
    uint64_t move;
    int32_t score;
    uint32_t generation; /* the search that wrote it: entries of earlier searches count as empty */
    int16_t depth;
    int16_t bound;
} Entry;

#define TT_BITS 21

typedef struct {
    Entry *table;
    uint64_t mask;
    uint32_t generation;
    uint64_t nodes, max_nodes;
    double deadline; /* seconds, monotonic; 0: none */
    int limits_on, stopped;
    int reuse; /* entries of this thread's earlier searches count too (they are replaced first) */
    int endgames; /* probe the endgame database loaded when the search started: */
    const unsigned char *eg_table;
    int eg_max;
    uint64_t killers[MAX_PLY + 2][2];
    uint32_t history[32][32];
    uint64_t path[MAX_PATH];
    int path_len;
    NnPath nn; /* the learned evaluation along the path; nn.net NULL: the hand-written one with the weights w */
    int w[W_COUNT];
} Search;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Count a node; true when the search must stop (time or node budget spent). */
static inline int tick(Search *s) {
    s->nodes++;
    if (s->limits_on) {
        if (s->max_nodes && s->nodes >= s->max_nodes) s->stopped = 1;
        else if (s->deadline > 0 && !(s->nodes & CLOCK_EVERY) && now_s() >= s->deadline) s->stopped = 1;
    }
    return s->stopped;
}

/* The table holds buckets of two entries: the first keeps the deepest search of its positions, the
 * second the latest; a probe looks at both. An entry of an earlier search counts only when the search
 * reuses the table (s->reuse), and is the first replaced either way (aging). */
static inline Entry *probe(Search *s, uint64_t key) {
    Entry *bucket = &s->table[key & s->mask & ~(uint64_t)1];
    if (bucket[0].hash == key && (bucket[0].generation == s->generation || s->reuse)) return &bucket[0];
    if (bucket[1].hash == key && (bucket[1].generation == s->generation || s->reuse)) return &bucket[1];
    return NULL;
}

static inline void store(Search *s, uint64_t key, uint64_t move, int score, int depth, int bound) {
    Entry *bucket = &s->table[key & s->mask & ~(uint64_t)1];
    int fresh = bucket[0].generation == s->generation;
    Entry *e = (!fresh || bucket[0].hash == key || depth >= bucket[0].depth) ? &bucket[0] : &bucket[1];
    if (e == &bucket[0] && fresh && bucket[0].hash != key) bucket[1] = bucket[0]; /* keep the one it replaces */
    e->generation = s->generation;
    e->hash = key;
    e->move = move;
    e->score = score;
    e->depth = (int16_t)depth;
    e->bound = (int16_t)bound;
}

static void order_moves(Search *s, Move *moves, int n, int captures, uint64_t tt_move, int ply) {
    if (n < 2) return;
    for (int i = 0; i < n; i++) {
        Move *m = &moves[i];
        if (m->key == tt_move) m->score = 1 << 30;
        else if (captures) m->score = m->taken;
        else if (m->key == s->killers[ply][0]) m->score = 1 << 29;
        else if (m->key == s->killers[ply][1]) m->score = 1 << 28;
        else {
            uint32_t h = s->history[m->key & 31][(m->key >> 5) & 31];
            m->score = h > (1u << 27) ? 1 << 27 : (int)h;
        }
    }
    for (int i = 1; i < n; i++) { /* stable insertion sort, highest first */
        Move t = moves[i];
        int j = i - 1;
        while (j >= 0 && moves[j].score < t.score) { moves[j + 1] = moves[j]; j--; }
        moves[j + 1] = t;
    }
}

/* The static evaluation of the position at `ply`, which nn_enter has recorded when the network is on. */
static inline int static_eval(Search *s, bb own, bb opp, bb kings, int black, int ply) {
    return s->nn.net ? nn_evaluate_at(&s->nn, ply, black) : evaluate(own, opp, kings, black, s->w);
}

static int quiesce(Search *s, bb own, bb opp, bb kings, int black, int alpha, int beta, int ply) {
    if (tick(s)) return 0;
    if (s->nn.net) nn_enter(&s->nn, ply, own, opp, kings, black);
    if (!jumpers(own, opp, kings, black)) {
        if (!count_quiet(own, opp, kings, black)) return ply - WIN;
        return static_eval(s, own, opp, kings, black, ply);
    }
    if (ply >= MAX_PLY) return static_eval(s, own, opp, kings, black, ply);
    Move moves[MAX_MOVES];
    int captures;
    int n = generate(own, opp, kings, black, GEN_DEDUPE, moves, NULL, MAX_MOVES, &captures, NULL);
    order_moves(s, moves, n, 1, 0, ply);
    int best = -WIN;
    for (int i = 0; i < n; i++) {
        int score = -quiesce(s, moves[i].opp, moves[i].own, moves[i].kings, !black, -beta, -alpha, ply + 1);
        if (s->stopped) return 0;
        if (score > best) {
            best = score;
            if (score > alpha) {
                alpha = score;
                if (alpha >= beta) break;
            }
        }
    }
    return best;
}

static int node(Search *s, bb own, bb opp, bb kings, int black, int depth, int alpha, int beta, int ply,
                int progress) {
    if (depth <= 0) return quiesce(s, own, opp, kings, black, alpha, beta, ply);
    if (tick(s)) return 0;
    if (s->nn.net) nn_enter(&s->nn, ply, own, opp, kings, black);
    uint64_t key = position_hash(own, opp, kings, black);
    __builtin_prefetch(&s->table[key & s->mask & ~(uint64_t)1]); /* the table is far bigger than the caches */
    Move moves[MAX_MOVES];
    int captures;
    int n = generate(own, opp, kings, black, GEN_DEDUPE, moves, NULL, MAX_MOVES, &captures, NULL);
    if (!n) return ply - WIN;
    if (progress >= FORTY_MOVE_PLIES) return 0;
    if (ply >= MAX_PLY || s->path_len >= MAX_PATH - 1) return static_eval(s, own, opp, kings, black, ply);
    if (progress >= 4) {
        int len = s->path_len, limit = progress < len ? progress : len;
        for (int back = 4; back <= limit; back += 2)
            if (s->path[len - back] == key) return 0;
    }
    if (s->endgames) {
        /* A proved result from the database, unless the forty-move rule could come first. */
        int v = eg_lookup(s->eg_table, s->eg_max, own, opp, kings, black);
        if (v == EG_DRAW || (v && progress + v - 1 < FORTY_MOVE_PLIES)) return eg_score(v, ply);
    }
    uint64_t tt_move = 0;
    Entry *e = probe(s, key);
    if (e) {
        tt_move = e->move;
        if (e->depth >= depth) {
            int es = e->score;
            if (es > WIN - MATE_RANGE) es -= ply;
            else if (es < MATE_RANGE - WIN) es += ply;
            if (e->bound == EXACT || (e->bound == LOWER && es >= beta) || (e->bound == UPPER && es <= alpha))
                return es;
        }
    }
    int next_depth = (n == 1 && ply < EXTEND_LIMIT) ? depth : depth - 1;
    order_moves(s, moves, n, captures, tt_move, ply);
    int original_alpha = alpha, best = -WIN - 1;
    uint64_t best_key = 0;
    s->path[s->path_len++] = key;
    for (int i = 0; i < n; i++) {
        Move *m = &moves[i];
        int child_progress = m->irrev ? 0 : progress + 1;
        int score;
        if (i == 0) {
            score = -node(s, m->opp, m->own, m->kings, !black, next_depth, -beta, -alpha, ply + 1, child_progress);
        } else {
            int reduce = !captures && i >= 3 && depth >= 3 && m->key != s->killers[ply][0] &&
                         m->key != s->killers[ply][1];
            score = -node(s, m->opp, m->own, m->kings, !black, reduce ? next_depth - 1 : next_depth, -alpha - 1,
                          -alpha, ply + 1, child_progress);
            if (!s->stopped && score > alpha && reduce)
                score = -node(s, m->opp, m->own, m->kings, !black, next_depth, -alpha - 1, -alpha, ply + 1,
                              child_progress);
            if (!s->stopped && alpha < score && score < beta)
                score = -node(s, m->opp, m->own, m->kings, !black, next_depth, -beta, -alpha, ply + 1,
                              child_progress);
        }
        if (s->stopped) { s->path_len--; return 0; }
        if (score > best) {
            best = score;
            best_key = m->key;
            if (score > alpha) {
                alpha = score;
                if (alpha >= beta) {
                    if (!captures) {
                        if (s->killers[ply][0] != m->key) {
                            s->killers[ply][1] = s->killers[ply][0];
                            s->killers[ply][0] = m->key;
                        }
                        uint32_t *h = &s->history[m->key & 31][(m->key >> 5) & 31];
                        if (*h < (1u << 30)) *h += (uint32_t)(depth * depth); /* saturates, never wraps */
                    }
                    break;
                }
            }
        }
    }
    s->path_len--;
    int bound = best >= beta ? LOWER : best > original_alpha ? EXACT : UPPER;
    int stored = best;
    if (stored > WIN - MATE_RANGE) stored += ply;
    else if (stored < MATE_RANGE - WIN) stored -= ply;
    store(s, key, best_key, stored, depth, bound);
    return best;
}

/* What one search found, in C terms (turned into Python objects by the caller). */
typedef struct {
    int has_move, score, depth, pv_len;
    uint64_t nodes;
    uint64_t pv[MAX_DEPTH + 16];
    double elapsed_ms;
} Outcome;

typedef struct {
    bb own, opp, kings;
    int black;
    double time_ms;    /* 0: no time limit */
    int max_depth;
    uint64_t max_nodes; /* 0: no node limit */
    int no_progress;
    int history_len;
    int endgames;
    int use_network;
    int reuse_table;
    uint64_t history[MAX_PATH / 2];
    int w[W_COUNT];
} Request;

/* Each thread keeps one table for all its searches (allocated on its first search, never freed):
 * a new search only moves the generation on, instead of clearing megabytes. */
static pthread_key_t table_key; /* the thread's table, freed when the thread ends */
static _Thread_local uint32_t thread_generation;

static int search_alloc(Search *s) {
    memset(s, 0, sizeof(*s));
    Entry *thread_table = pthread_getspecific(table_key);
    if (!thread_table) {
        thread_table = calloc((size_t)1 << TT_BITS, sizeof(Entry));
        if (!thread_table || pthread_setspecific(table_key, thread_table) != 0) { free(thread_table); return -1; }
        thread_generation = 0;
    }
    if (++thread_generation == 0) { /* wrapped: old entries could pass for new ones */
        memset(thread_table, 0, sizeof(Entry) << TT_BITS);
        thread_generation = 1;
    }
    s->table = thread_table;
    s->generation = thread_generation;
    s->mask = ((uint64_t)1 << TT_BITS) - 1;
    return 0;
}

/* The learned evaluation for a search from the root position (ply 0): -1 when out of memory. */
static int search_network(Search *s, const Network *n, bb own, bb opp, bb kings, int black) {
    if (nn_path_open(&s->nn, n, nn_simd) < 0) return -1;
    nn_enter(&s->nn, 0, own, opp, kings, black);
    return 0;
}

static void run_search(const Request *q, Outcome *out) {
    double started = now_s();
    Search *s = malloc(sizeof(Search));
    memset(out, 0, sizeof(*out));
    if (!s || search_alloc(s) < 0 ||
        (q->use_network && search_network(s, network, q->own, q->opp, q->kings, q->black) < 0)) {
        if (s) nn_path_close(&s->nn);
        free(s);
        out->score = 0;
        out->has_move = -1;
        return;
    }
    memcpy(s->w, q->w, sizeof(s->w));
    s->reuse = q->reuse_table;
    s->max_nodes = q->max_nodes;
    s->endgames = q->endgames && eg_max;
    s->eg_table = eg_table;
    s->eg_max = eg_max;
    int max_depth = q->max_depth < 1 ? 1 : q->max_depth > MAX_DEPTH ? MAX_DEPTH : q->max_depth;
    Move root[MAX_MOVES];
    int captures;
    int n = generate(q->own, q->opp, q->kings, q->black, GEN_DEDUPE, root, NULL, MAX_MOVES, &captures, NULL);
    if (!n) {
        out->has_move = 0;
        out->score = -WIN;
        out->nodes = 1;
        out->elapsed_ms = (now_s() - started) * 1000;
        nn_path_close(&s->nn);
        free(s);
        return;
    }
    int keep = q->no_progress < q->history_len ? q->no_progress : q->history_len;
    if (keep < 0) keep = 0;
    for (int i = 0; i < keep; i++) s->path[s->path_len++] = q->history[q->history_len - keep + i];
    uint64_t root_key = position_hash(q->own, q->opp, q->kings, q->black);
    uint64_t best_key = root[0].key;
    int best_score = 0, completed = 0;
    double deadline = q->time_ms > 0 ? started + q->time_ms / 1000.0 : 0;
    double soft = q->time_ms > 0 ? started + q->time_ms / 2000.0 : 0;
    s->deadline = deadline;
    for (int iteration = 1; iteration <= max_depth; iteration++) {
        s->limits_on = iteration > 1;
        int alpha = -WIN - 1, beta = WIN + 1, it_score = -WIN - 1, have = 0;
        uint64_t it_best = 0;
        order_moves(s, root, n, captures, best_key, 0);
        s->path[s->path_len++] = root_key;
        for (int i = 0; i < n; i++) {
            Move *m = &root[i];
            int child_progress = m->irrev ? 0 : q->no_progress + 1;
            int next_depth = n == 1 ? iteration : iteration - 1;
            int score;
            if (i == 0) {
                score = -node(s, m->opp, m->own, m->kings, !q->black, next_depth, -beta, -alpha, 1, child_progress);
            } else {
                score = -node(s, m->opp, m->own, m->kings, !q->black, next_depth, -alpha - 1, -alpha, 1,
                              child_progress);
                if (!s->stopped && score > alpha)
                    score = -node(s, m->opp, m->own, m->kings, !q->black, next_depth, -beta, -alpha, 1,
                                  child_progress);
            }
            if (s->stopped) break;
            if (score > it_score) {
                it_score = score;
                it_best = m->key;
                have = 1;
                if (score > alpha) alpha = score;
            }
        }
        s->path_len--;
        if (s->stopped) {
            if (have) { best_key = it_best; best_score = it_score; }
            break;
        }
        best_key = it_best;
        best_score = it_score;
        completed = iteration;
        store(s, root_key, best_key, best_score, iteration, EXACT);
        int mate = best_score > WIN - MATE_RANGE || best_score < MATE_RANGE - WIN;
        int plies = WIN - (best_score < 0 ? -best_score : best_score);
        if (mate && plies <= iteration) break;
        if (n == 1 && iteration >= 4) break;
        if (soft > 0 && now_s() >= soft) break;
    }
    /* The principal variation: the best move, then the table's moves (at most completed + 8 plies). */
    int limit = (completed > 1 ? completed : 1) + 8;
    bb own = q->own, opp = q->opp, kings = q->kings;
    int black = q->black;
    uint64_t seen[MAX_DEPTH + 16];
    int nseen = 0;
    uint64_t key = best_key;
    while (key && out->pv_len < limit && out->pv_len < MAX_DEPTH + 16) {
        Move moves[MAX_MOVES];
        int caps;
        int k = generate(own, opp, kings, black, GEN_DEDUPE, moves, NULL, MAX_MOVES, &caps, NULL);
        int found = -1;
        for (int i = 0; i < k; i++)
            if (moves[i].key == key) { found = i; break; }
        if (found < 0) break;
        out->pv[out->pv_len++] = key;
        bb no = moves[found].opp, nopp = moves[found].own;
        own = no;
        opp = nopp;
        kings = moves[found].kings;
        black = !black;
        uint64_t h = position_hash(own, opp, kings, black);
        int repeated = 0;
        for (int i = 0; i < nseen; i++)
            if (seen[i] == h) repeated = 1;
        if (repeated) break;
        seen[nseen++] = h;
        Entry *e = probe(s, h);
        key = e ? e->move : 0;
    }
    out->has_move = 1;
    out->score = best_score;
    out->depth = completed;
    out->nodes = s->nodes;
    out->elapsed_ms = (now_s() - started) * 1000;
    nn_path_close(&s->nn);
    free(s);
}

/* ---------------------------------------------------------------- Python interface */

static int parse_position(PyObject *args_black, PyObject *args_white, PyObject *args_kings, int black_to_move,
                          bb *own, bb *opp, bb *kings) {
    unsigned long b = PyLong_AsUnsignedLong(args_black);
    if (PyErr_Occurred()) return -1;
    unsigned long w = PyLong_AsUnsignedLong(args_white);
    if (PyErr_Occurred()) return -1;
    unsigned long k = PyLong_AsUnsignedLong(args_kings);
    if (PyErr_Occurred()) return -1;
    if (b > FULL || w > FULL || k > FULL) {
        PyErr_SetString(PyExc_ValueError, "a bitboard must fit in 32 bits");
        return -1;
    }
    if (b & w) {
        PyErr_SetString(PyExc_ValueError, "a square holds both a black and a white piece");
        return -1;
    }
    if (k & ~(b | w)) {
        PyErr_SetString(PyExc_ValueError, "a king on an empty square");
        return -1;
    }
    *own = (bb)(black_to_move ? b : w);
    *opp = (bb)(black_to_move ? w : b);
    *kings = (bb)k;
    return 0;
}

/* weights: None (the module's current weights) or a mapping of some weight names to ints. */
static int parse_weights(PyObject *mapping, int *w) {
    memcpy(w, current_weights, sizeof(int) * W_COUNT);
    if (mapping == NULL || mapping == Py_None) return 0;
    if (!PyDict_Check(mapping)) {
        PyErr_SetString(PyExc_TypeError, "weights must be a dict of names to ints");
        return -1;
    }
    Py_ssize_t matched = 0;
    for (int i = 0; i < W_COUNT; i++) {
        PyObject *value = PyDict_GetItemString(mapping, WEIGHT_NAMES[i]);
        if (!value) continue;
        if (!PyLong_Check(value) || PyBool_Check(value)) {
            PyErr_Format(PyExc_TypeError, "weight %s must be an int", WEIGHT_NAMES[i]);
            return -1;
        }
        long v = PyLong_AsLong(value);
        if (PyErr_Occurred()) return -1;
        if (v < -10000 || v > 10000) {
            PyErr_Format(PyExc_ValueError, "weight %s must be within -10000..10000, not %ld", WEIGHT_NAMES[i], v);
            return -1;
        }
        w[i] = (int)v;
        matched++;
    }
    if (matched != PyDict_Size(mapping)) {
        PyErr_SetString(PyExc_ValueError, "unknown weight name (see WEIGHT_NAMES)");
        return -1;
    }
    return 0;
}

static PyObject *route_tuple(const Route *r) {
    PyObject *path = PyTuple_New(r->len), *caps = PyTuple_New(r->ncap);
    if (!path || !caps) { Py_XDECREF(path); Py_XDECREF(caps); return NULL; }
    for (int i = 0; i < r->len; i++) PyTuple_SET_ITEM(path, i, PyLong_FromLong(r->path[i]));
    for (int i = 0; i < r->ncap; i++) PyTuple_SET_ITEM(caps, i, PyLong_FromLong(r->caps[i]));
    return Py_BuildValue("(NNO)", path, caps, r->crowned ? Py_True : Py_False);
}

/* The route with move key `key` whose path comes first in order (as Position.legal_moves() sorts). */
static int route_of(bb own, bb opp, bb kings, int black, uint64_t key, Route *found) {
    static Route routes_buf[MAX_ROUTES];
    Route *routes = routes_buf;
    int captures, overflow;
    int n = generate(own, opp, kings, black, GEN_ROUTES, NULL, routes, MAX_ROUTES, &captures, &overflow);
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (routes[i].key != key) continue;
        if (best < 0) { best = i; continue; }
        int a = routes[i].len < routes[best].len ? routes[i].len : routes[best].len, cmp = 0;
        for (int j = 0; j < a && !cmp; j++) cmp = (int)routes[i].path[j] - (int)routes[best].path[j];
        if (cmp < 0 || (cmp == 0 && routes[i].len < routes[best].len)) best = i;
    }
    if (best < 0) return -1;
    *found = routes[best];
    return 0;
}

static PyObject *py_legal_moves(PyObject *self, PyObject *args) {
    PyObject *b, *w, *k;
    int black;
    if (!PyArg_ParseTuple(args, "OOOp:legal_moves", &b, &w, &k, &black)) return NULL;
    bb own, opp, kings;
    if (parse_position(b, w, k, black, &own, &opp, &kings) < 0) return NULL;
    Route *routes = PyMem_Malloc(sizeof(Route) * MAX_ROUTES);
    if (!routes) return PyErr_NoMemory();
    int captures, overflow;
    int n = generate(own, opp, kings, black, GEN_ROUTES, NULL, routes, MAX_ROUTES, &captures, &overflow);
    if (overflow) {
        PyMem_Free(routes);
        PyErr_SetString(PyExc_OverflowError, "more capture routes than the core keeps");
        return NULL;
    }
    PyObject *list = PyList_New(n);
    if (!list) { PyMem_Free(routes); return NULL; }
    for (int i = 0; i < n; i++) {
        PyObject *t = route_tuple(&routes[i]);
        if (!t) { Py_DECREF(list); PyMem_Free(routes); return NULL; }
        PyList_SET_ITEM(list, i, t);
    }
    PyMem_Free(routes);
    return list;
}

static PyObject *py_perft(PyObject *self, PyObject *args) {
    PyObject *b, *w, *k;
    int black, depth;
    if (!PyArg_ParseTuple(args, "OOOpi:perft", &b, &w, &k, &black, &depth)) return NULL;
    if (depth < 0 || depth > 30) {
        PyErr_Format(PyExc_ValueError, "depth must be within 0..30, not %d", depth);
        return NULL;
    }
    bb own, opp, kings;
    if (parse_position(b, w, k, black, &own, &opp, &kings) < 0) return NULL;
    uint64_t total;
    Py_BEGIN_ALLOW_THREADS
    total = perft(own, opp, kings, black, depth);
    Py_END_ALLOW_THREADS
    return PyLong_FromUnsignedLongLong(total);
}

static PyObject *py_evaluate(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"black", "white", "kings", "black_to_move", "weights", "network", NULL};
    PyObject *b, *w, *k, *weights = NULL;
    int black, use_network = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOp|O$p:evaluate", kwlist, &b, &w, &k, &black, &weights,
                                     &use_network))
        return NULL;
    bb own, opp, kings;
    int wv[W_COUNT];
    if (parse_position(b, w, k, black, &own, &opp, &kings) < 0 || parse_weights(weights, wv) < 0) return NULL;
    if (use_network) {
        if (!network) { PyErr_SetString(PyExc_RuntimeError, "no network is loaded"); return NULL; }
        return PyLong_FromLong(nn_evaluate(network, own, opp, kings, black));
    }
    return PyLong_FromLong(evaluate(own, opp, kings, black, wv));
}

static int parse_history(PyObject *history, Request *q) {
    q->history_len = 0;
    if (history == NULL || history == Py_None) return 0;
    PyObject *seq = PySequence_Fast(history, "history must be a sequence of (black, white, kings, black_to_move)");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Py_ssize_t first = n > MAX_PATH / 4 ? n - MAX_PATH / 4 : 0; /* only the last plies can repeat */
    for (Py_ssize_t i = first; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *b, *w, *k;
        int black;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "OOOp", &b, &w, &k, &black)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "history items are (black, white, kings, black_to_move)");
            Py_DECREF(seq);
            return -1;
        }
        bb own, opp, kings;
        if (parse_position(b, w, k, black, &own, &opp, &kings) < 0) { Py_DECREF(seq); return -1; }
        q->history[q->history_len++] = position_hash(own, opp, kings, black);
    }
    Py_DECREF(seq);
    return 0;
}

static PyObject *py_search(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"black", "white", "kings", "black_to_move", "time_ms", "depth", "nodes", "history",
                             "no_progress", "weights", "endgames", "network", "reuse_table", NULL};
    PyObject *b, *w, *k, *history = NULL, *weights = NULL;
    int black, depth = MAX_DEPTH, no_progress = 0, endgames = 1, use_network = 0, reuse_table = 0;
    double time_ms = 0;
    unsigned long long nodes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOp|$diKOiOppp:search", kwlist, &b, &w, &k, &black, &time_ms,
                                     &depth, &nodes, &history, &no_progress, &weights, &endgames, &use_network,
                                     &reuse_table))
        return NULL;
    if (use_network && !network) {
        PyErr_SetString(PyExc_RuntimeError, "no network is loaded");
        return NULL;
    }
    if (time_ms < 0 || depth < 1 || no_progress < 0) {
        PyErr_SetString(PyExc_ValueError, "time_ms, nodes and no_progress must be >= 0 and depth >= 1");
        return NULL;
    }
    Request *q = PyMem_Malloc(sizeof(Request));
    Outcome *out = PyMem_Malloc(sizeof(Outcome));
    if (!q || !out) { PyMem_Free(q); PyMem_Free(out); return PyErr_NoMemory(); }
    if (parse_position(b, w, k, black, &q->own, &q->opp, &q->kings) < 0 || parse_weights(weights, q->w) < 0 ||
        parse_history(history, q) < 0) {
        PyMem_Free(q);
        PyMem_Free(out);
        return NULL;
    }
    q->black = black;
    q->time_ms = time_ms;
    q->max_depth = depth;
    q->max_nodes = nodes;
    q->no_progress = no_progress;
    q->endgames = endgames;
    q->use_network = use_network;
    q->reuse_table = reuse_table;
    Py_BEGIN_ALLOW_THREADS
    run_search(q, out);
    Py_END_ALLOW_THREADS
    if (out->has_move < 0) { PyMem_Free(q); PyMem_Free(out); return PyErr_NoMemory(); }
    PyObject *pv = PyList_New(0);
    PyObject *move = NULL;
    bb own = q->own, opp = q->opp, kings = q->kings;
    int side = q->black;
    for (int i = 0; pv && i < out->pv_len; i++) {
        Route r;
        if (route_of(own, opp, kings, side, out->pv[i], &r) < 0) break;
        PyObject *t = route_tuple(&r);
        if (!t || PyList_Append(pv, t) < 0) { Py_XDECREF(t); Py_CLEAR(pv); break; }
        Py_DECREF(t);
        /* play the move: the search's children give the position after it */
        Move moves[MAX_MOVES];
        int caps;
        int n = generate(own, opp, kings, side, GEN_DEDUPE, moves, NULL, MAX_MOVES, &caps, NULL);
        for (int j = 0; j < n; j++)
            if (moves[j].key == out->pv[i]) {
                own = moves[j].opp;
                opp = moves[j].own;
                kings = moves[j].kings;
                side = !side;
                break;
            }
    }
    if (!pv) { PyMem_Free(q); PyMem_Free(out); return NULL; }
    if (PyList_GET_SIZE(pv) > 0) {
        move = PyList_GET_ITEM(pv, 0);
        Py_INCREF(move);
    } else {
        move = Py_None;
        Py_INCREF(move);
    }
    PyObject *result = Py_BuildValue("{s:N,s:i,s:i,s:K,s:N,s:d}", "move", move, "score", out->score, "depth",
                                     out->depth, "nodes", (unsigned long long)out->nodes, "pv", pv, "elapsed_ms",
                                     out->elapsed_ms);
    PyMem_Free(q);
    PyMem_Free(out);
    return result;
}

/* Every root move scored with a full window to `depth` plies (for the levels that add noise). */
static PyObject *py_score_moves(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"black", "white", "kings", "black_to_move", "depth", "time_ms", "weights", "endgames",
                             "network", NULL};
    PyObject *b, *w, *k, *weights = NULL;
    int black, depth, endgames = 1, use_network = 0;
    double time_ms = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOpi|$dOpp:score_moves", kwlist, &b, &w, &k, &black, &depth,
                                     &time_ms, &weights, &endgames, &use_network))
        return NULL;
    if (use_network && !network) {
        PyErr_SetString(PyExc_RuntimeError, "no network is loaded");
        return NULL;
    }
    if (depth < 1 || depth > MAX_DEPTH || time_ms < 0) {
        PyErr_SetString(PyExc_ValueError, "depth must be within 1..60 and time_ms >= 0");
        return NULL;
    }
    bb own, opp, kings;
    int wv[W_COUNT];
    if (parse_position(b, w, k, black, &own, &opp, &kings) < 0 || parse_weights(weights, wv) < 0) return NULL;
    Search *s = PyMem_Malloc(sizeof(Search));
    if (!s) return PyErr_NoMemory();
    int failed;
    Move root[MAX_MOVES];
    int scores[MAX_MOVES];
    int n = 0, scored = 0, captures;
    Py_BEGIN_ALLOW_THREADS
    failed = search_alloc(s) < 0 || (use_network && search_network(s, network, own, opp, kings, black) < 0);
    if (!failed) {
        memcpy(s->w, wv, sizeof(wv));
        s->endgames = endgames && eg_max > 0;
        s->eg_table = eg_table;
        s->eg_max = eg_max;
        s->limits_on = time_ms > 0;
        s->deadline = time_ms > 0 ? now_s() + time_ms / 1000.0 : 0;
        n = generate(own, opp, kings, black, GEN_DEDUPE, root, NULL, MAX_MOVES, &captures, NULL);
        for (int i = 0; i < n; i++) {
            int score = -node(s, root[i].opp, root[i].own, root[i].kings, !black, depth - 1, -WIN - 1, WIN + 1, 1, 0);
            if (s->stopped) break;
            scores[scored++] = score;
        }
    }
    Py_END_ALLOW_THREADS
    uint64_t visited = s->nodes;
    nn_path_close(&s->nn);
    PyMem_Free(s);
    if (failed) return PyErr_NoMemory();
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < scored; i++) {
        Route r;
        if (route_of(own, opp, kings, black, root[i].key, &r) < 0) continue;
        PyObject *item = Py_BuildValue("(Ni)", route_tuple(&r), scores[i]);
        if (!item || PyList_Append(list, item) < 0) { Py_XDECREF(item); Py_CLEAR(list); break; }
        Py_DECREF(item);
    }
    if (!list) return NULL;
    return Py_BuildValue("(NK)", list, (unsigned long long)visited);
}

#define EG_MAGIC "CKEGDB1\n"

static PyObject *py_endgame_build(PyObject *self, PyObject *args) {
    int pieces;
    const char *path;
    if (!PyArg_ParseTuple(args, "is:endgame_build", &pieces, &path)) return NULL;
    if (pieces < 2 || pieces > EG_MAX_PIECES) {
        PyErr_Format(PyExc_ValueError, "pieces must be within 2..%d, not %d", EG_MAX_PIECES, pieces);
        return NULL;
    }
    uint64_t size = EG_BASE[pieces + 1];
    unsigned char *table = malloc(size);
    if (!table) return PyErr_NoMemory();
    EgStats st;
    int complete;
    double started = now_s();
    Py_BEGIN_ALLOW_THREADS
    complete = eg_build(table, pieces, &st) == 0;
    Py_END_ALLOW_THREADS
    double seconds = now_s() - started;
    FILE *f = fopen(path, "wb");
    if (!f) { free(table); return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path); }
    unsigned char header[16] = {0};
    memcpy(header, EG_MAGIC, 8);
    header[8] = (unsigned char)pieces;
    int ok = fwrite(header, 1, 16, f) == 16 && fwrite(table, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    free(table);
    if (!ok) return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    return Py_BuildValue("{s:i,s:K,s:K,s:K,s:K,s:K,s:i,s:i,s:O,s:d,s:K}", "pieces", pieces, "positions",
                         (unsigned long long)st.positions, "wins", (unsigned long long)st.wins, "losses",
                         (unsigned long long)st.losses, "draws", (unsigned long long)st.draws, "invalid",
                         (unsigned long long)st.invalid, "passes", st.passes, "longest", st.longest, "complete",
                         complete ? Py_True : Py_False, "seconds", seconds, "bytes", (unsigned long long)(size + 16));
}

static PyObject *py_endgame_load(PyObject *self, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s:endgame_load", &path)) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    unsigned char header[16];
    if (fread(header, 1, 16, f) != 16 || memcmp(header, EG_MAGIC, 8) != 0 || header[8] < 2 ||
        header[8] > EG_MAX_PIECES) {
        fclose(f);
        PyErr_Format(PyExc_ValueError, "%s is not an endgame database", path);
        return NULL;
    }
    int pieces = header[8];
    uint64_t size = EG_BASE[pieces + 1];
    unsigned char *table = malloc(size + 1);
    if (!table) { fclose(f); return PyErr_NoMemory(); }
    size_t got;
    Py_BEGIN_ALLOW_THREADS
    got = fread(table, 1, size + 1, f);
    Py_END_ALLOW_THREADS
    fclose(f);
    if (got != size) {
        free(table);
        PyErr_Format(PyExc_ValueError, "%s has the wrong size for %d pieces", path, pieces);
        return NULL;
    }
    /* A table searches may be reading is never freed: a second load (rare) keeps the first in memory. */
    eg_max = 0;
    eg_table = table;
    eg_max = pieces;
    return PyLong_FromLong(pieces);
}

static PyObject *py_endgame_pieces(PyObject *self, PyObject *unused) { return PyLong_FromLong(eg_max); }

static PyObject *py_endgame_unload(PyObject *self, PyObject *unused) {
    eg_max = 0; /* the table stays in memory: a search in another thread may still read it */
    Py_RETURN_NONE;
}

static PyObject *py_endgame_probe(PyObject *self, PyObject *args) {
    PyObject *b, *w, *k;
    int black;
    if (!PyArg_ParseTuple(args, "OOOp:endgame_probe", &b, &w, &k, &black)) return NULL;
    bb own, opp, kings;
    if (parse_position(b, w, k, black, &own, &opp, &kings) < 0) return NULL;
    int v = eg_probe(own, opp, kings, black);
    if (!v || v == EG_INVALID) Py_RETURN_NONE;
    if (v == EG_DRAW) return Py_BuildValue("(si)", "draw", 0);
    return Py_BuildValue("(si)", ((v - 1) & 1) ? "win" : "loss", v - 1);
}

static PyObject *py_endgame_verify(PyObject *self, PyObject *unused) {
    if (!eg_max) {
        PyErr_SetString(PyExc_RuntimeError, "no endgame database is loaded");
        return NULL;
    }
    uint64_t wrong;
    Py_BEGIN_ALLOW_THREADS
    wrong = eg_verify(eg_table, eg_max);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(KK)", (unsigned long long)wrong, (unsigned long long)EG_BASE[eg_max + 1]);
}

static PyObject *py_endgame_entry(PyObject *self, PyObject *args) {
    unsigned long long index;
    if (!PyArg_ParseTuple(args, "K:endgame_entry", &index)) return NULL;
    if (!eg_max || index >= EG_BASE[eg_max + 1]) {
        PyErr_SetString(PyExc_IndexError, "no such entry in the loaded endgame database");
        return NULL;
    }
    bb own, opp, kings;
    if (!eg_position(index, &own, &opp, &kings)) Py_RETURN_NONE;
    return Py_BuildValue("(kkk)", (unsigned long)own, (unsigned long)opp, (unsigned long)kings);
}

static PyObject *weights_dict(const int *w) {
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < W_COUNT; i++) {
        PyObject *v = PyLong_FromLong(w[i]);
        if (!v || PyDict_SetItemString(d, WEIGHT_NAMES[i], v) < 0) { Py_XDECREF(v); Py_CLEAR(d); break; }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *py_get_weights(PyObject *self, PyObject *unused) { return weights_dict(current_weights); }

static PyObject *py_set_weights(PyObject *self, PyObject *arg) {
    int w[W_COUNT];
    if (parse_weights(arg, w) < 0) return NULL;
    memcpy(current_weights, w, sizeof(w));
    Py_RETURN_NONE;
}

static PyObject *py_reset_weights(PyObject *self, PyObject *unused) {
    memcpy(current_weights, DEFAULT_WEIGHTS, sizeof(current_weights));
    Py_RETURN_NONE;
}

#define NN_MAGIC "CKNET1\n"

/* load_network(data: bytes): the network of a file of game/engine/network.py's format, for every later
 * search that asks for it. A network replaced by another is kept in memory (a search of another
 * thread may still read it). */
static PyObject *py_load_network(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = view.buf;
    Py_ssize_t len = view.len;
    int32_t dims[3];
    if (len < 8 + 12 || memcmp(p, NN_MAGIC, 8) != 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "not a network file (no CKNET1 header)");
        return NULL;
    }
    memcpy(dims, p + 8, sizeof(dims));
    int h1 = dims[0], h2 = dims[1], shift = dims[2];
    if (h1 < 32 || h1 > NN_MAX_H1 || h1 % 32 || h2 < 1 || h2 > NN_MAX_H2 || shift < 0 || shift > 24) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "unsupported network shape %d, %d (shift %d)", h1, h2, shift);
        return NULL;
    }
    size_t sizes[6] = {sizeof(int16_t) * NN_INPUTS * h1, sizeof(int16_t) * h1, (size_t)h1 * h2,
                       sizeof(int32_t) * h2, sizeof(int32_t) * h2, sizeof(int32_t)};
    size_t total = 20;
    for (int i = 0; i < 6; i++) total += sizes[i];
    if ((size_t)len != total) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "a network of shape %d, %d takes %zu bytes, not %zd", h1, h2, total, len);
        return NULL;
    }
    Network *n = calloc(1, sizeof(Network));
    void *blocks[5] = {NULL};
    for (int i = 0; n && i < 5; i++) blocks[i] = aligned_alloc(64, (sizes[i] + 63) / 64 * 64);
    if (!n || !blocks[0] || !blocks[1] || !blocks[2] || !blocks[3] || !blocks[4]) {
        for (int i = 0; i < 5; i++) free(blocks[i]);
        free(n);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    const unsigned char *at = p + 20;
    for (int i = 0; i < 5; i++) { memcpy(blocks[i], at, sizes[i]); at += sizes[i]; }
    n->h1 = h1; n->h2 = h2; n->shift = shift;
    n->w1 = blocks[0]; n->b1 = blocks[1]; n->w2 = blocks[2]; n->b2 = blocks[3]; n->w3 = blocks[4];
    memcpy(&n->b3, at, sizeof(int32_t));
    PyBuffer_Release(&view);
    /* The first layer's sums are int16: with any 32 features they must stay within range. */
    for (int i = 0; i < h1; i++) {
        int mags[NN_INPUTS];
        for (int f = 0; f < NN_INPUTS; f++) mags[f] = abs((int)n->w1[(size_t)f * h1 + i]);
        for (int a = 1; a < NN_INPUTS; a++) { /* insertion sort, largest first */
            int t = mags[a], b = a - 1;
            while (b >= 0 && mags[b] < t) { mags[b + 1] = mags[b]; b--; }
            mags[b + 1] = t;
        }
        long bound = labs((long)n->b1[i]);
        for (int f = 0; f < 32; f++) bound += mags[f];
        if (bound > 32767) {
            for (int k = 0; k < 5; k++) free(blocks[k]);
            free(n);
            PyErr_Format(PyExc_ValueError, "first-layer unit %d could leave the int16 range", i);
            return NULL;
        }
    }
    network = n;
    return Py_BuildValue("(ii)", h1, h2);
}

static PyObject *py_network_shape(PyObject *self, PyObject *unused) {
    if (!network) Py_RETURN_NONE;
    return Py_BuildValue("(ii)", network->h1, network->h2);
}

static PyObject *py_network_simd(PyObject *self, PyObject *unused) {
    return PyUnicode_FromString(nn_simd == 2 ? "avx2" : nn_simd == 1 ? "ssse3" : "c");
}

/* network_evaluate(black, white, kings, black_to_move, simd=-1): the loaded network's score; simd 0, 1, 2
 * forces the plain C, SSSE3 or AVX2 path (where the machine has it), -1 the one searches use. */
static PyObject *py_network_evaluate(PyObject *self, PyObject *args) {
    PyObject *b, *w, *k;
    int black, simd = -1;
    if (!PyArg_ParseTuple(args, "OOOp|i:network_evaluate", &b, &w, &k, &black, &simd)) return NULL;
    bb own, opp, kings;
    if (parse_position(b, w, k, black, &own, &opp, &kings) < 0) return NULL;
    if (!network) { PyErr_SetString(PyExc_RuntimeError, "no network is loaded"); return NULL; }
    if (simd > nn_simd || simd < -1) {
        PyErr_Format(PyExc_ValueError, "this machine's best path is %d", nn_simd);
        return NULL;
    }
    return PyLong_FromLong(nn_evaluate_with(network, own, opp, kings, black, simd < 0 ? nn_simd : simd));
}

/* network_trace(steps, simd=-1): the search's first layer along a path of positions, for the tests that
 * compare it with the from-scratch sums. steps: (ply, black, white, kings, black_to_move, evaluate), the
 * first at ply 0 (the root), each at most one ply below the one before (a child: a move made) or at any
 * ply above (the moves below undone, another made), as the search enters its nodes. For each step:
 * None, or when evaluated (score for the side to move, the first layer's h1 int16 sums of its view as
 * native-endian bytes). */
static PyObject *py_network_trace(PyObject *self, PyObject *args) {
    PyObject *steps;
    int simd = -1;
    if (!PyArg_ParseTuple(args, "O|i:network_trace", &steps, &simd)) return NULL;
    const Network *n = network;
    if (!n) { PyErr_SetString(PyExc_RuntimeError, "no network is loaded"); return NULL; }
    if (simd > nn_simd || simd < -1) {
        PyErr_Format(PyExc_ValueError, "this machine's best path is %d", nn_simd);
        return NULL;
    }
    PyObject *seq = PySequence_Fast(steps, "steps must be a sequence");
    if (!seq) return NULL;
    NnPath *path = PyMem_Calloc(1, sizeof(NnPath));
    if (!path || nn_path_open(path, n, simd < 0 ? nn_simd : simd) < 0) {
        PyMem_Free(path);
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject *list = PyList_New(count);
    int depth = -1;
    for (Py_ssize_t i = 0; list && i < count; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i), *b, *w, *k;
        int ply, black, wanted;
        bb own, opp, kings;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "iOOOpp", &ply, &b, &w, &k, &black, &wanted)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "steps are (ply, black, white, kings, black_to_move, evaluate)");
            Py_CLEAR(list);
            break;
        }
        if (ply < 0 || ply > depth + 1 || ply > MAX_PLY) {
            PyErr_Format(PyExc_ValueError, "step %zd: ply %d is not within 0..%d", i, ply,
                         depth + 1 < MAX_PLY ? depth + 1 : MAX_PLY);
            Py_CLEAR(list);
            break;
        }
        if (parse_position(b, w, k, black, &own, &opp, &kings) < 0) { Py_CLEAR(list); break; }
        nn_enter(path, ply, own, opp, kings, black);
        depth = ply;
        PyObject *entry;
        if (wanted) {
            int score = nn_evaluate_at(path, ply, black);
            entry = Py_BuildValue("(iy#)", score, (const char *)nn_acc(path, ply, !black),
                                  (Py_ssize_t)(sizeof(int16_t) * (size_t)n->h1));
        } else {
            entry = Py_NewRef(Py_None);
        }
        if (!entry) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, i, entry);
    }
    nn_path_close(path);
    PyMem_Free(path);
    Py_DECREF(seq);
    return list;
}

static PyMethodDef methods[] = {
    {"legal_moves", py_legal_moves, METH_VARARGS,
     "legal_moves(black, white, kings, black_to_move) -> [(path, captured, crowned)]\n\n"
     "Every legal move (every capture route) with its squares 1-32, in no particular order."},
    {"perft", py_perft, METH_VARARGS,
     "perft(black, white, kings, black_to_move, depth) -> int\n\n"
     "Leaf positions depth plies ahead; capture routes count separately (as game.rules.perft)."},
    {"evaluate", (PyCFunction)(void (*)(void))py_evaluate, METH_VARARGS | METH_KEYWORDS,
     "evaluate(black, white, kings, black_to_move, weights=None) -> int\n\n"
     "The static evaluation for the side to move, hundredths of a man."},
    {"search", (PyCFunction)(void (*)(void))py_search, METH_VARARGS | METH_KEYWORDS,
     "search(black, white, kings, black_to_move, *, time_ms=0, depth=60, nodes=0, history=None,\n"
     "       no_progress=0, weights=None) -> dict\n\n"
     "Best move, score, depth, nodes, principal variation and elapsed_ms. 0 means no limit."},
    {"score_moves", (PyCFunction)(void (*)(void))py_score_moves, METH_VARARGS | METH_KEYWORDS,
     "score_moves(black, white, kings, black_to_move, depth, *, time_ms=0, weights=None)\n"
     "    -> ([(route, score)], nodes)\n\n"
     "Every root move scored with a full window; stops (with fewer moves) when time_ms is spent."},
    {"endgame_build", py_endgame_build, METH_VARARGS,
     "endgame_build(pieces, path) -> dict: build the database of every position with at most pieces pieces\n"
     "into the file path (time, counts, size)."},
    {"endgame_load", py_endgame_load, METH_VARARGS, "endgame_load(path) -> pieces: load a database for the searches."},
    {"endgame_unload", py_endgame_unload, METH_NOARGS, "endgame_unload(): searches stop using the database."},
    {"endgame_pieces", py_endgame_pieces, METH_NOARGS, "endgame_pieces() -> int: pieces the loaded database covers (0: none)."},
    {"endgame_probe", py_endgame_probe, METH_VARARGS,
     "endgame_probe(black, white, kings, black_to_move) -> ('win'|'loss'|'draw', plies) or None."},
    {"endgame_verify", py_endgame_verify, METH_NOARGS,
     "endgame_verify() -> (wrong, entries): positions whose value does not follow from their moves'."},
    {"endgame_entry", py_endgame_entry, METH_VARARGS,
     "endgame_entry(index) -> (black, white, kings) with Black to move, or None for an invalid entry."},
    {"get_weights", py_get_weights, METH_NOARGS, "get_weights() -> dict: the current evaluation weights."},
    {"set_weights", py_set_weights, METH_O, "set_weights(mapping): change some evaluation weights."},
    {"reset_weights", py_reset_weights, METH_NOARGS, "reset_weights(): back to the default weights."},
    {"load_network", py_load_network, METH_O,
     "load_network(data) -> (h1, h2): the network of a file's bytes (game/engine/network.py) for the searches\n"
     "that ask for it (network=True)."},
    {"network_shape", py_network_shape, METH_NOARGS, "network_shape() -> (h1, h2) of the loaded network, or None."},
    {"network_simd", py_network_simd, METH_NOARGS, "network_simd() -> 'avx2', 'ssse3' or 'c': the network's path here."},
    {"network_evaluate", py_network_evaluate, METH_VARARGS,
     "network_evaluate(black, white, kings, black_to_move, simd=-1) -> int: the network's score for the side\n"
     "to move (hundredths of a man); simd 0, 1, 2 forces the plain C, SSSE3 or AVX2 path."},
    {"network_trace", py_network_trace, METH_VARARGS,
     "network_trace(steps, simd=-1) -> [None | (score, bytes)]: the search's incremental first layer along a\n"
     "path of (ply, black, white, kings, black_to_move, evaluate) steps, for tests."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_core", "The engine's compiled core (game/engine/core/core.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void) {
    init_geometry();
    init_binomials();
    nn_detect();
    if (pthread_key_create(&table_key, free) != 0) return PyErr_NoMemory();
    memcpy(current_weights, DEFAULT_WEIGHTS, sizeof(current_weights));
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *names = PyTuple_New(W_COUNT);
    if (!names) { Py_DECREF(m); return NULL; }
    for (int i = 0; i < W_COUNT; i++) PyTuple_SET_ITEM(names, i, PyUnicode_FromString(WEIGHT_NAMES[i]));
    if (PyModule_AddObject(m, "WEIGHT_NAMES", names) < 0) { Py_DECREF(names); Py_DECREF(m); return NULL; }
    PyObject *defaults = weights_dict(DEFAULT_WEIGHTS);
    if (!defaults || PyModule_AddObject(m, "DEFAULT_WEIGHTS", defaults) < 0) {
        Py_XDECREF(defaults);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "WIN", WIN) < 0 || PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH) < 0 ||
        PyModule_AddIntConstant(m, "FORTY_MOVE_PLIES", FORTY_MOVE_PLIES) < 0 ||
        PyModule_AddIntConstant(m, "MATE_RANGE", MATE_RANGE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
