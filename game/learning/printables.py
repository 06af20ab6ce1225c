"""Printable sheets as PDF, in the page's language: the board with its 1-32 numbers, cut-out pieces,
and the rules on one page. Drawn with ReportLab (BSD; docs/learning.md says why it was chosen), on
A4 with the 14 standard PDF fonts (WinAnsi covers French and Spanish).

The board is drawn as the site draws it (docs/rules.md, "Board and notation"): square 1 at the top
left dark square as White sees the board, White's men on 21-32 at the bottom.
"""

from __future__ import annotations

import io
from functools import lru_cache

from django.utils import translation
from django.utils.translation import gettext as _
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfgen import canvas

#: The sheets, by the name in their address.
SHEETS = ("board", "pieces", "rules")

DARK = colors.HexColor("#3f6b45")
LIGHT = colors.HexColor("#efe3c8")
FRAME = colors.HexColor("#2b2118")


def _title(pdf: canvas.Canvas, text: str, y: float) -> None:
    width, _height = A4
    pdf.setFont("Helvetica-Bold", 20)
    pdf.drawCentredString(width / 2, y, text)


def _board(pdf: canvas.Canvas) -> None:
    width, height = A4
    _title(pdf, _("Checkers board"), height - 25 * mm)
    side = 22 * mm
    left, top = (width - 8 * side) / 2, height - 40 * mm
    pdf.setFillColor(FRAME)
    pdf.rect(left - 4 * mm, top - 8 * side - 4 * mm, 8 * side + 8 * mm, 8 * side + 8 * mm, fill=1, stroke=0)
    for row in range(8):
        for col in range(8):
            dark = (row + col) % 2 == 1
            x, y = left + col * side, top - (row + 1) * side
            pdf.setFillColor(DARK if dark else LIGHT)
            pdf.rect(x, y, side, side, fill=1, stroke=0)
            if dark:
                pdf.setFillColor(colors.white)
                pdf.setFont("Helvetica-Bold", 11)
                pdf.drawString(x + 2 * mm, y + side - 5 * mm, str(row * 4 + col // 2 + 1))
    pdf.setFillColor(colors.black)
    pdf.setFont("Helvetica", 11)
    lines = [_("Black's men start on squares 1 to 12 (the top), White's on 21 to 32 (the bottom)."),
             _("Black moves first. Moves are written with these numbers: 11-15, or 22x15 for a capture."),
             _("Place the board with a dark square in each player's near-left corner.")]
    y = top - 8 * side - 16 * mm
    for line in lines:
        pdf.drawCentredString(width / 2, y, line)
        y -= 6 * mm


def _piece(pdf: canvas.Canvas, x: float, y: float, radius: float, black: bool, crown: bool) -> None:
    pdf.setStrokeColor(colors.grey)
    pdf.setDash(2, 2)
    pdf.circle(x, y, radius + 1.5 * mm, stroke=1, fill=0)
    pdf.setDash()
    pdf.setFillColor(colors.HexColor("#1d1d1f") if black else colors.HexColor("#f6f1e6"))
    pdf.setStrokeColor(colors.black)
    pdf.circle(x, y, radius, stroke=1, fill=1)
    pdf.setStrokeColor(colors.white if black else colors.black)
    pdf.circle(x, y, radius * 0.7, stroke=1, fill=0)
    if crown:
        pdf.setFillColor(colors.HexColor("#e0b100"))
        r = radius * 0.45
        path = pdf.beginPath()
        path.moveTo(x - r, y - r * 0.5)
        for dx, dy in ((-r, r * 0.6), (-r * 0.5, 0), (0, r * 0.8), (r * 0.5, 0), (r, r * 0.6), (r, -r * 0.5)):
            path.lineTo(x + dx, y + dy)
        path.close()
        pdf.drawPath(path, fill=1, stroke=0)


def _pieces(pdf: canvas.Canvas) -> None:
    width, height = A4
    _title(pdf, _("Pieces to cut out"), height - 25 * mm)
    pdf.setFont("Helvetica", 11)
    pdf.drawCentredString(width / 2, height - 33 * mm,
                          _("Twelve men of each colour, and four crowned pieces of each for the kings."))
    radius, gap = 9 * mm, 23 * mm
    for index in range(32):
        row, col = divmod(index, 8)
        black = row < 2
        crown = (index % 16) >= 12
        x = width / 2 + (col - 3.5) * gap
        y = height - 55 * mm - row * gap - (15 * mm if row >= 2 else 0)
        _piece(pdf, x, y, radius, black, crown)
    pdf.setFillColor(colors.black)
    pdf.drawCentredString(width / 2, 40 * mm,
                          _("Cut along the dotted circles. A king is a man with a crowned piece on top."))


def _rules(pdf: canvas.Canvas) -> None:
    width, height = A4
    _title(pdf, _("The rules of checkers"), height - 25 * mm)
    paragraphs = [
        _("The board: 64 squares, only the 32 dark ones are used, numbered 1 to 32. Each player has twelve "
          "men; Black on 1 to 12, White on 21 to 32. Black moves first."),
        _("Moving: a man steps one square diagonally forward to an empty square. A king steps one square "
          "diagonally in any direction."),
        _("Capturing: a piece jumps an enemy piece next to it onto the empty square beyond and removes it. "
          "Men capture forward only, kings in every direction."),
        _("Capture is compulsory: when a capture is possible, a capture must be played. Any capturing route "
          "may be chosen."),
        _("Multi-jumps: after a jump the same piece keeps jumping while it can; the whole route is one move. "
          "No piece is jumped twice."),
        _("Crowning: a man reaching the far row becomes a king (put a second piece on it). A capture that "
          "crowns ends there."),
        _("Winning: the player who cannot move, having no piece or no legal move, loses. A player may also "
          "resign."),
        _("Draws: by agreement; the same position a third time with the same side to move; forty moves each "
          "without a capture or a man move."),
    ]
    y = height - 40 * mm
    pdf.setFont("Helvetica", 11.5)
    for paragraph in paragraphs:
        for line in _wrap(paragraph, pdf, width - 40 * mm):
            pdf.drawString(20 * mm, y, line)
            y -= 6 * mm
        y -= 4 * mm


def _wrap(text: str, pdf: canvas.Canvas, width: float) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        trial = f"{line} {word}".strip()
        if pdf.stringWidth(trial, "Helvetica", 11.5) > width and line:
            lines.append(line)
            line = word
        else:
            line = trial
    return lines + [line] if line else lines


_DRAW = {"board": _board, "pieces": _pieces, "rules": _rules}


@lru_cache(maxsize=32)
def render(name: str, language: str) -> bytes:
    """The sheet ``name`` (one of :data:`SHEETS`) as PDF bytes, its texts in ``language`` (a code of
    the site's languages). Raises KeyError for another sheet."""
    buffer = io.BytesIO()
    with translation.override(language):
        pdf = canvas.Canvas(buffer, pagesize=A4, pageCompression=1, invariant=1)
        pdf.setTitle(_("Checkers live") + " · " + {"board": _("Checkers board"), "pieces": _("Pieces to cut out"),
                                                    "rules": _("The rules of checkers")}[name])
        _DRAW[name](pdf)
        pdf.showPage()
        pdf.save()
    return buffer.getvalue()
