"""The learned evaluation: training positions from self-play, the network's training, its export.

Run from the repository root (after ``make install``, which builds the core)::

    .venv/bin/python bench/train_network.py generate --seed 1 --games 30000 --nodes 4000   # var/network/games-1.npz
    .venv/bin/python bench/train_network.py train --data var/network/games-1.npz              # var/network/model-1.pt
    .venv/bin/python bench/train_network.py export --model var/network/model-1.pt             # game/engine/network.bin

(docs/engine.md, "The learned evaluation", gives the four ``train`` runs of the shipped network.)

``generate`` plays self-play games of the compiled core at a fixed node budget per move
(``--nodes``; no time limit, so a game depends only on its seed, the evaluation the core
searches with (``--evaluation``: ``network`` or ``hand``) and the endgame database), each from one of
the ACF's approved 3-move ballots (taken in turn from a seeded shuffle), with a random legal move
instead of the search's one ``--random`` of the time in the ``--random-plies`` plies after the
ballot. A game ends by the rules (no move, a third repetition, the forty-move rule), is adjudicated
a draw after ``--max-plies``, or ends with the endgame database's exact result as soon as the
position has no more pieces than the loaded database covers (``manage.py build_endgames``; without
one the games are played out). Every quiet position (the side to move has no capture) is kept with
its game's result and the search's score; the game records of ``tests/data/*.pdn`` with a result
are added (their positions with the game's result and no score). One ``.npz`` file (numpy) holds
``black``, ``white``, ``kings`` (uint32 bitboards, bit n - 1 for square n), ``black_to_move``,
``result`` (Black's point of view: 1, 0.5, 0), ``score`` (hundredths of a man, side to move's
view; 0 and ``has_score`` False for the records) and ``game`` (the game's number).

``train`` fits the network (PyTorch, on the CPU) to those positions: the position is seen from
the side to move (a White-to-move position mirrored), 128 inputs (own men, own kings, other men,
other kings on the 32 squares), two hidden layers with clipped ReLU, one output in hundredths of a
man. The prediction ``sigmoid(K * output)`` is fitted by mean squared error to
``lam * result + (1 - lam) * sigmoid(K * score)`` (``--lam``; ``K`` 0.01 per hundredth of a man, the
fit of ``bench/texel.py``), both for the side to move. One game in twenty is held out and its loss
printed each epoch. ``export`` quantizes the model to the core's integer network
(``game/engine/network.py`` describes the file) and records its outputs on fixed positions beside
it (``network.json``), which ``tests/engine/test_network.py`` checks.

Training needs ``pip install torch numpy`` (bench only: the site reads the exported file in C).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from game.engine import native  # noqa: E402
from game.rules import Game, ballots  # noqa: E402

OUT = ROOT / "var" / "network"
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
FORTY_MOVE_PLIES = 80
#: The logistic fit's scale: 0.01 per hundredth of a man (bench/texel.py's K).
K = 0.01


def load_text() -> str:
    """The machine's load average, as the benches print it."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min; {os.cpu_count()} cores)"


def apply_route(black: int, white: int, kings: int, black_to_move: bool,
                route: tuple[tuple[int, ...], tuple[int, ...], bool]) -> tuple[int, int, int, bool, bool]:
    """The position after the core's ``route`` (path of squares 1-32, captured squares, crowned):
    ``(black, white, kings, black_to_move, irreversible)``; irreversible for a capture or a man's move."""
    path, captured, crowned = route
    start, end = 1 << (path[0] - 1), 1 << (path[-1] - 1)
    taken = 0
    for square in captured:
        taken |= 1 << (square - 1)
    was_king = bool(kings & start)
    if black_to_move:
        black = (black & ~start) | end
        white &= ~taken
    else:
        white = (white & ~start) | end
        black &= ~taken
    kings &= ~(start | taken)
    if was_king or crowned:
        kings |= end
    return black, white, kings, not black_to_move, bool(captured) or not was_king


_LOADED: dict[str, tuple[str | None, str | None]] = {}


def self_play_game(index: int, opening: tuple[str, ...], seed: int, nodes: int, random_rate: float,
                   random_plies: int, max_plies: int, evaluation: str, network: str | None,
                   endgames: str | None) -> tuple[float, list[tuple[int, int, int, bool, int]], int]:
    """One self-play game from ``opening``: ``(result from Black's view, [(black, white, kings,
    black_to_move, score)] of its quiet positions, plies)``. The same arguments give the same game."""
    core = native._module()
    if (endgames, network) != _LOADED.get("files"):  # once per worker process (a database is never freed)
        if endgames:
            native.load_endgames(Path(endgames))
        if network:
            native.load_network(Path(network))
        _LOADED["files"] = (endgames, network)
    rng = random.Random(seed * 1_000_003 + index)
    position = Game.from_moves(opening).position
    state = (position.black, position.white, position.kings, position.turn.value == "B")
    pieces_db = core.endgame_pieces()
    extra = {"network": True} if evaluation == "network" else {}
    history: list[tuple[int, int, int, bool]] = []
    counts: dict[tuple[int, int, int, bool], int] = {}
    kept: list[tuple[int, int, int, bool, int]] = []
    ply, no_progress = len(opening), 0
    result = 0.5
    while True:
        counts[state] = counts.get(state, 0) + 1
        if counts[state] >= 3 or no_progress >= FORTY_MOVE_PLIES:
            result = 0.5
            break
        black, white, kings, btm = state
        if pieces_db and bin(black | white).count("1") <= pieces_db:
            verdict = core.endgame_probe(*state)
            if verdict is not None:
                outcome = verdict[0]
                result = 0.5 if outcome == "draw" else float((outcome == "win") == btm)
                break
        moves = core.legal_moves(*state)
        if not moves:
            result = 0.0 if btm else 1.0
            break
        if ply >= max_plies:
            result = 0.5
            break
        if ply < len(opening) + random_plies and rng.random() < random_rate:
            route = rng.choice(sorted(moves))
            score = None
        else:
            raw = core.search(*state, nodes=nodes, history=history[-no_progress:] if no_progress else [],
                              no_progress=no_progress, endgames=bool(pieces_db), **extra)
            route, score = raw["move"], raw["score"]
        if score is not None and not moves[0][1] and abs(score) < 5000:
            kept.append((black, white, kings, btm, score))
        history.append(state)
        black, white, kings, btm, irreversible = apply_route(black, white, kings, btm, route)
        state = (black, white, kings, btm)
        ply += 1
        if irreversible:
            no_progress = 0
            history.clear()
            counts.clear()
        else:
            no_progress += 1
    return result, kept, ply


def record_positions() -> list[tuple[int, int, int, bool, float]]:
    """The quiet positions of the game records of ``tests/data/*.pdn`` with a result:
    ``[(black, white, kings, black_to_move, result from Black's view)]``."""
    from game.rules.pdn import read_games, replay

    rows = []
    for path in sorted((ROOT / "tests" / "data").glob("*.pdn")):
        with path.open("rb") as handle:
            for pdn_game in read_games(handle):
                if pdn_game.result not in RESULTS:
                    continue
                done = replay(pdn_game)
                if not done.ok or done.record is None:
                    continue
                for position in done.record.positions:
                    moves = position.legal_moves()
                    if moves and not moves[0].captures:
                        rows.append((position.black, position.white, position.kings,
                                     position.turn.value == "B", RESULTS[pdn_game.result]))
    return rows


def generate(args: argparse.Namespace) -> None:
    """The ``generate`` command: play the games, write the ``.npz`` file, print counts and times."""
    deck = [tuple(b.moves) for b in ballots.approved()]
    random.Random(args.seed).shuffle(deck)
    endgames = None
    for pieces in range(5, 1, -1):
        candidate = native.endgame_path(pieces)
        if candidate.is_file():
            endgames = str(candidate)
            break
    network = str(args.network or native.NETWORK_PATH) if args.evaluation == "network" else None
    jobs = [(i, deck[i % len(deck)], args.seed, args.nodes, args.random, args.random_plies, args.max_plies,
             args.evaluation, network, endgames) for i in range(args.games)]
    print(f"{args.games} games at {args.nodes} nodes a move, evaluation {args.evaluation}, endgame database "
          f"{endgames or 'none'}; {args.workers} worker(s); {load_text()}", flush=True)
    started = time.perf_counter()
    rows: list[tuple[int, int, int, bool, float, int, bool, int]] = []
    outcomes = {1.0: 0, 0.5: 0, 0.0: 0}
    plies = 0
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.workers, mp_context=context) as pool:
        for index, (result, kept, length) in enumerate(pool.map(self_play_game, *zip(*jobs, strict=True),
                                                                chunksize=16)):
            outcomes[result] += 1
            plies += length
            rows.extend((b, w, k, btm, result, score, True, index) for b, w, k, btm, score in kept)
            if (index + 1) % 500 == 0:
                print(f"  {index + 1} games, {len(rows):,} positions, {time.perf_counter() - started:.0f} s; "
                      f"{load_text()}", flush=True)
            if (index + 1) % args.save_every == 0 and index + 1 < args.games:
                write_positions(args, rows, outcomes, plies, started)
    write_positions(args, rows, outcomes, plies, started)
    print(f"{load_text()}")


def write_positions(args: argparse.Namespace, rows: list, outcomes: dict[float, int], plies: int,
                    started: float) -> None:
    """Write the self-play rows so far and the records' positions to the ``.npz`` file (replacing it)."""
    rows = rows + [(b, w, k, btm, result, 0, False, -1) for b, w, k, btm, result in record_positions()]
    columns = list(zip(*rows, strict=True))
    out = args.output or OUT / f"games-{args.seed}.npz"
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.stem + ".partial.npz")
    np.savez_compressed(partial, black=np.array(columns[0], np.uint32), white=np.array(columns[1], np.uint32),
                        kings=np.array(columns[2], np.uint32), black_to_move=np.array(columns[3], bool),
                        result=np.array(columns[4], np.float32), score=np.array(columns[5], np.int32),
                        has_score=np.array(columns[6], bool), game=np.array(columns[7], np.int32),
                        settings=np.array(repr(vars(args))))
    partial.replace(out)
    games = sum(outcomes.values())
    print(f"{games} games (+{outcomes[1.0]} ={outcomes[0.5]} -{outcomes[0.0]} for Black), {plies:,} plies; "
          f"{len(rows):,} positions written to {out}; {time.perf_counter() - started:.0f} s", flush=True)


# Training -----------------------------------------------------------------------------------------------

def mirror(x: np.ndarray) -> np.ndarray:
    """Each uint32 bitboard with bit i moved to bit 31 - i (square n to 33 - n)."""
    x = x.astype(np.uint32)
    x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
    x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
    x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
    x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
    return ((x >> 16) | (x << 16)).astype(np.uint32)


def features(black: np.ndarray, white: np.ndarray, kings: np.ndarray, black_to_move: np.ndarray) -> np.ndarray:
    """The network's inputs, shape (n, 128) uint8: own men, own kings, other men, other kings on squares
    1-32, seen from the side to move (a White-to-move position mirrored), as the core computes them."""
    btm = black_to_move.astype(bool)
    own = np.where(btm, black, mirror(white)).astype(np.uint32)
    opp = np.where(btm, white, mirror(black)).astype(np.uint32)
    k = np.where(btm, kings, mirror(kings)).astype(np.uint32)
    groups = [own & ~k, own & k, opp & ~k, opp & k]
    shifts = np.arange(32, dtype=np.uint32)
    return np.concatenate([((g[:, None] >> shifts) & 1).astype(np.uint8) for g in groups], axis=1)


def reference_output(net: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """The integer network of ``net`` (the exported arrays) on inputs ``x`` (n, 128): the core's
    scores, hundredths of a man, before the ±4000 bound."""
    h1 = net["b1"].astype(np.int32) + x.astype(np.int32) @ net["w1"].astype(np.int32)
    a1 = np.clip(h1, 0, 127)
    h2 = net["b2"].astype(np.int64) + a1.astype(np.int64) @ net["w2"].astype(np.int64).T
    a2 = np.clip(h2 >> 6, 0, 127)
    out = int(net["b3"]) + a2 @ net["w3"].astype(np.int64)
    return out >> int(net["shift"])


def load_training(paths: list[Path], lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs (n, 128), targets (n,) for the side to move, and a held-out mask (one game in twenty)."""
    xs, ts, held = [], [], []
    for number, path in enumerate(paths):
        d = np.load(path)
        btm = d["black_to_move"]
        result = np.where(btm, d["result"], 1 - d["result"]).astype(np.float32)
        searched = 1 / (1 + np.exp(-K * d["score"].astype(np.float32)))
        target = np.where(d["has_score"], lam * result + (1 - lam) * searched, result)
        xs.append(features(d["black"], d["white"], d["kings"], btm))
        ts.append(target.astype(np.float32))
        held.append((d["game"] >= 0) & ((d["game"] + 7 * number) % 20 == 0))
    return np.concatenate(xs), np.concatenate(ts), np.concatenate(held)


def make_model(h1: int, h2: int) -> Any:
    """The float model: 128 inputs, two clipped-ReLU layers, one output (a logit: hundredths of a man x K)."""
    import torch

    return torch.nn.Sequential(torch.nn.Linear(128, h1), torch.nn.Hardtanh(0, 1), torch.nn.Linear(h1, h2),
                               torch.nn.Hardtanh(0, 1), torch.nn.Linear(h2, 1))


def train(args: argparse.Namespace) -> None:
    """The ``train`` command: fit the float model and save it (PyTorch state and shape)."""
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    x_all, t_all, held = load_training(args.data, args.lam)
    x_train, t_train = torch.from_numpy(x_all[~held]), torch.from_numpy(t_all[~held])
    x_test, t_test = torch.from_numpy(x_all[held]).float(), torch.from_numpy(t_all[held])
    print(f"{len(x_train):,} training positions, {len(x_test):,} held out; lam {args.lam}; shape 128-{args.h1}-"
          f"{args.h2}-1; {load_text()}", flush=True)
    model = make_model(args.h1, args.h2)
    if args.start:
        model.load_state_dict(torch.load(args.start, weights_only=False)["state"])
    optimiser = torch.optim.Adam(model.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, args.epochs)
    limit2 = 127 / 64

    def loss_of(x: Any, t: Any) -> Any:
        return torch.mean((torch.sigmoid(model(x).squeeze(1)) - t) ** 2)

    test = float("nan")
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(len(x_train))
        total, batches = 0.0, 0
        for i in range(0, len(order), args.batch):
            index = order[i:i + args.batch]
            loss = loss_of(x_train[index].float(), t_train[index])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            with torch.no_grad():
                model[0].weight.clamp_(-4, 4)
                model[2].weight.clamp_(-limit2, limit2)
            total += loss.item()
            batches += 1
        schedule.step()
        with torch.no_grad():
            test = loss_of(x_test, t_test).item()
        print(f"epoch {epoch:>3}: training loss {total / batches:.5f}, held out {test:.5f}, "
              f"{time.perf_counter() - started:.0f} s", flush=True)
    out = args.output or OUT / f"model-{args.seed}.pt"
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state": model.state_dict(), "h1": args.h1, "h2": args.h2,
                "settings": {k: [str(p) for p in v] if isinstance(v, list) else str(v) for k, v in vars(args).items()},
                "held_out_loss": test}, out)
    print(f"model written to {out}; {time.perf_counter() - started:.0f} s; {load_text()}")


def quantize(model_path: Path, shift: int = 10) -> dict[str, Any]:
    """The integer arrays of a trained model, as the core reads them (see game/engine/native.py)."""
    import torch

    saved = torch.load(model_path, weights_only=False)
    state = {k: v.numpy().astype(np.float64) for k, v in saved["state"].items()}
    w1, b1 = state["0.weight"], state["0.bias"]   # (h1, 128), (h1,)
    w2, b2 = state["2.weight"], state["2.bias"]   # (h2, h1), (h2,)
    w3, b3 = state["4.weight"][0], state["4.bias"][0]
    scale = 1 / K                                  # the output in hundredths of a man
    return {"h1": int(saved["h1"]), "h2": int(saved["h2"]), "shift": shift,
            "w1": np.round(w1.T * 127).astype(np.int16), "b1": np.round(b1 * 127).astype(np.int16),
            "w2": np.clip(np.round(w2 * 64), -128, 127).astype(np.int8),
            "b2": np.round(b2 * 127 * 64).astype(np.int32),
            "w3": np.round(w3 * scale * (1 << shift) / 127).astype(np.int32),
            "b3": np.int32(round(b3 * scale * (1 << shift))), "settings": saved.get("settings", {}),
            "held_out_loss": saved.get("held_out_loss")}


def network_bytes(net: dict[str, Any]) -> bytes:
    """The file's bytes (format in game/engine/native.py, ``load_network``)."""
    head = b"CKNET1\n\0" + np.array([net["h1"], net["h2"], net["shift"]], "<i4").tobytes()
    body = [net["w1"].astype("<i2"), net["b1"].astype("<i2"), net["w2"].astype("i1"), net["b2"].astype("<i4"),
            net["w3"].astype("<i4"), np.array([net["b3"]], "<i4")]
    return head + b"".join(a.tobytes() for a in body)


#: The positions whose scores the shipped file records (tests/engine/test_network.py replays them).
RECORDED = [
    "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12",
    "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,9,10,11,12,15",
    "B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14",
    "B:W14,18,19,25,27,28,29,30,32:B1,3,4,5,6,7,8,10,12,16,K31",
    "W:WK3,K12,K28,20:BK10,K19,K23,5",
    "B:W18,27:B14,K22",
    "W:W30,31,32:B1,2,3",
    "B:WK32:BK1,K5",
    "W:W17,19,21,24,25,26,27,29,31:B3,4,5,6,8,10,13,16,20",
    "B:W22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11",
]


def export(args: argparse.Namespace) -> None:
    """The ``export`` command: quantize, compare with the float model, write the file and its record."""
    import hashlib
    import json

    import torch

    from game.rules import Position

    net = quantize(args.model, args.shift)
    data = network_bytes(net)
    out = args.output
    out.write_bytes(data)
    model = make_model(net["h1"], net["h2"])
    model.load_state_dict(torch.load(args.model, weights_only=False)["state"])
    positions = [Position.from_fen(fen) for fen in RECORDED]
    x = features(*(np.array([getattr(p, name) for p in positions], np.uint32) for name in ("black", "white", "kings")),
                 np.array([p.turn.value == "B" for p in positions]))
    exact = reference_output(net, x)
    with torch.no_grad():
        floats = model(torch.from_numpy(x).float()).squeeze(1).numpy() / K
    print("position, integer network, float model (hundredths of a man):")
    for fen, a, b in zip(RECORDED, exact, floats, strict=True):
        print(f"  {fen:<72} {int(a):>6} {b:>8.1f}")
    record = {"file": out.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
              "shape": [128, net["h1"], net["h2"], 1], "shift": net["shift"],
              "trained": net["settings"], "held_out_loss": net["held_out_loss"],
              "outputs": [[fen, int(max(-4000, min(4000, v)))] for fen, v in zip(RECORDED, exact, strict=True)]}
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"{out} ({len(data):,} bytes) and {out.with_suffix('.json').name} written")



def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="self-play games into a positions file")
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--games", type=int, default=1000)
    gen.add_argument("--nodes", type=int, default=4000)
    gen.add_argument("--random", type=float, default=0.1)
    gen.add_argument("--random-plies", type=int, default=10)
    gen.add_argument("--max-plies", type=int, default=200)
    gen.add_argument("--workers", type=int, default=1)
    gen.add_argument("--evaluation", choices=["hand", "network"], default="hand")
    gen.add_argument("--network", type=Path, help="the network file the games search with (default: the shipped one)")
    gen.add_argument("--save-every", type=int, default=2000, help="write the file so far every N games")
    gen.add_argument("--output", type=Path)
    tr = commands.add_parser("train", help="fit the network to positions files")
    tr.add_argument("--data", type=Path, nargs="+", required=True)
    tr.add_argument("--seed", type=int, default=1)
    tr.add_argument("--h1", type=int, default=256)
    tr.add_argument("--h2", type=int, default=32)
    tr.add_argument("--lam", type=float, default=0.7, help="weight of the game's result against the search's score")
    tr.add_argument("--epochs", type=int, default=20)
    tr.add_argument("--batch", type=int, default=4096)
    tr.add_argument("--lr", type=float, default=2e-3)
    tr.add_argument("--threads", type=int, default=1)
    tr.add_argument("--start", type=Path, help="a model to start from (same shape)")
    tr.add_argument("--output", type=Path)
    ex = commands.add_parser("export", help="quantize a model into the core's network file")
    ex.add_argument("--model", type=Path, required=True)
    ex.add_argument("--shift", type=int, default=10)
    ex.add_argument("--output", type=Path, default=ROOT / "game" / "engine" / "network.bin")
    args = parser.parse_args(argv)
    {"generate": generate, "train": train, "export": export}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
