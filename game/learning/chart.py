"""The advantage chart of a review, drawn on the server as SVG (no script library, nothing inline).

The chart shows Black's win chance after every ply (0 at the bottom, 1 at the top, ½ the middle
line) as an area; marked moves are dots; each ply has a transparent column carrying its ``data-ply``
that a click on the game page turns into that position (static/js/learning/review.js). The
template ``learning/review_chart.html`` draws what :func:`chart` returns.
"""

from __future__ import annotations

from typing import Any

#: The chart's drawing box (SVG user units): it scales to the panel's width.
WIDTH, HEIGHT = 300, 120
#: How far from the edges the line keeps (units), so dots are not cut.
PAD = 4


def _xy(ply: int, plies: int, chance: float) -> tuple[float, float]:
    x = PAD + (WIDTH - 2 * PAD) * (ply / plies if plies else 0)
    y = PAD + (HEIGHT - 2 * PAD) * (1 - chance)
    return round(x, 1), round(y, 1)


def chart(result: dict[str, Any]) -> dict[str, Any]:
    """What the template draws for a review ``result`` (:func:`game.learning.judge.review_game`).

    ``{"width", "height", "line": "x,y x,y ..." (Black's chance after each ply), "area": an SVG path
    (the area under the line), "middle": y of ½, "columns": [{"ply", "x", "w"}], "dots": [{"ply",
    "x", "y", "mark"}], "turning": {"x"}|None}`` in SVG user units.
    """
    positions = result["positions"]
    plies = len(positions) - 1
    points = [_xy(p["ply"], plies, p["chance"]) for p in positions]
    line = " ".join(f"{x},{y}" for x, y in points)
    bottom = HEIGHT - PAD
    area = f"M{points[0][0]},{bottom} L" + " L".join(f"{x},{y}" for x, y in points) + f" L{points[-1][0]},{bottom} Z"
    step = (WIDTH - 2 * PAD) / plies if plies else WIDTH
    columns = [{"ply": p, "x": round(max(0.0, points[p][0] - step / 2), 1), "w": round(step, 1)}
               for p in range(plies + 1)]
    dots = [{"ply": m["ply"], "x": points[m["ply"]][0], "y": points[m["ply"]][1], "mark": m["mark"]}
            for m in result["moves"] if m["mark"]]
    turning = result.get("turning_point")
    return {"width": WIDTH, "height": HEIGHT, "line": line, "area": area, "middle": HEIGHT / 2,
            "columns": columns, "dots": dots, "turning": {"x": points[turning["ply"]][0]} if turning else None}
