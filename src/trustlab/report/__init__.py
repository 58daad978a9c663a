"""The audit report: sections of paragraphs, tables and figures, as self-contained HTML and JSON.

>>> from trustlab.report import Paragraph, Report, Section
>>> report = Report("Example")
>>> _ = report.add(Section("intro", "Introduction", [Paragraph("Hello.")], data={"n": 1}))
>>> [s["id"] for s in report.to_dict()["sections"]]
['intro']
"""

from trustlab.report.blocks import Figure, Paragraph, Table
from trustlab.report.builder import Report, Section

__all__ = ["Report", "Section", "Paragraph", "Table", "Figure"]
