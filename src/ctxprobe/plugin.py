"""What a plugin imports: everything a provider, tokenizer, family or report section needs,
from one module (docs/architecture.md's examples import only from here).

- registering: :func:`register`, :func:`unregister` (groups ``providers``, ``tokenizers``,
  ``families``, ``report_sections``);
- a provider: :class:`ProviderBase` (its optional members' defaults), the :class:`Provider`
  protocol, :class:`GenerateRequest` / :class:`GenerateResult`, :class:`ModelRef` (what its
  factory is handed), its catalog entry :class:`ProviderInfo` / :class:`ModelInfo` / :class:`Price`,
  and :class:`ProviderDeclaration` (all of it on one declaration: a provider in one folder);
- a tokenizer: :class:`TokenizerBase`, the :class:`Tokenizer` protocol, :class:`ApproxTokenizer`;
- a family: its :class:`FamilyDeclaration` (with an :class:`OverlapClaim`, a
  :class:`PublishedSet` read with :class:`ReadOptions`), :class:`FamilyBase`, the
  :class:`Family` protocol, :class:`BuildContext`, :class:`Case`, :class:`Cell`,
  :class:`Message`, :class:`Scored`, :class:`Outcome`;
- what a family adds to the reports: :class:`FamilyReportHooks`, reading the run's
  :class:`CaseRecord` s (each with its :class:`StoredResponse`), or :class:`LabelTableHooks`
  for one JSON object and one HTML table per family label;
- a report section: :class:`RunView` (what it is handed), :class:`ReportSection`,
  :class:`Table`, :class:`Figure`.
"""

from __future__ import annotations

from ctxprobe.core.case import Case, Cell, Message
from ctxprobe.core.catalog import ModelInfo, Price, ProviderInfo
from ctxprobe.core.declaration import FamilyDeclaration, OverlapClaim
from ctxprobe.core.family import Family, FamilyBase
from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.core.provider_declaration import ProviderDeclaration
from ctxprobe.core.records import CaseRecord, StoredResponse
from ctxprobe.core.registry import register, unregister
from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest, GenerateResult, Provider, ProviderBase
from ctxprobe.report.hooks import FamilyReportHooks
from ctxprobe.report.html.label_tables import LabelTableHooks
from ctxprobe.report.html.parts import Figure, ReportSection, Table
from ctxprobe.report.html.sections import RunView
from ctxprobe.spec.names import ModelRef
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.published import PublishedSet, ReadOptions
from ctxprobe.tokenizers.approx import ApproxTokenizer
from ctxprobe.tokenizers.base import Tokenizer, TokenizerBase

__all__ = [
    "ApproxTokenizer", "BuildContext", "Case", "CaseRecord", "Cell", "CtxprobeError", "Family", "FamilyBase",
    "FamilyDeclaration", "FamilyReportHooks", "Figure", "GenerateRequest", "GenerateResult", "LabelTableHooks", "Message", "ModelInfo", "ModelRef",
    "Outcome", "OverlapClaim", "Price", "Provider", "ProviderBase", "ProviderDeclaration", "ProviderInfo",
    "PublishedSet", "ReadOptions", "ReportSection", "RunView", "Scored",
    "StoredResponse", "Table", "Tokenizer", "TokenizerBase", "register", "unregister",
]
