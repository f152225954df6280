"""Which form a stack's realistic model takes (:class:`~roofline.spec.stack.FitForm`), chosen by prediction inside
each fold of leave-one-platform-out.

    loss(c, T) = mean over q in T, f of q of |log(pred_{c, T - q}(f) / measured(f))|
    chosen(T)  = argmin_c loss(c, T)     (a loss within TIE of the lowest ties; ties go to the earlier candidate)
    fold(p)    = chosen(P - {p})         (p's own figures never choose p's form)

The candidates are the shape term in work per core, none and in time (:data:`SHAPE_VARIANTS`; the first two on
fewer than :data:`~roofline.spec.stack.MIN_PLATFORMS` platforms), and for a stack with Server runs the per-call
dispatch held at each of :data:`CALL_GRID`, each with the non-GEMM passes in both forms (:data:`PASS_VARIANTS`);
then the best of them with a factor per platform, for a stack whose figures use two path classes or more on
enough platforms. A fit on ``P - {p, q}`` serves fold ``p``'s inner ``q`` and fold ``q``'s inner ``p``: it is
computed once.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from roofline.fidelity.figures import Figure
from roofline.fidelity.fit import FitTable, Params, faint_parts, first_best, fit
from roofline.spec.sourced import Sourced, bare_values
from roofline.spec.stack import MIN_PLATFORMS, FitForm, FormChoice
from roofline.spec.vocab import ShapeForm

#: the shape term in work per core, fitted (or assumed where the figures cannot tell), then left out (``work_half``
#: 0), then in time (:data:`~roofline.spec.vocab.ShapeForm.TIME`); in this order, so a later form is taken only where
#: it predicts better by more than a tie
SHAPE_VARIANTS = (ShapeForm.WORK, ShapeForm.NONE, ShapeForm.TIME)
#: the forms a stack fitted on fewer than :data:`~roofline.spec.stack.MIN_PLATFORMS` platforms chooses among: on
#: one or two other platforms a third form is chosen in sample (INC's IPEX stack, fitted on Sapphire Rapids alone
#: for the 8380, took the form in time and predicted the 8380's INT8 runs 2.3x too fast)
FEW_PLATFORM_SHAPES = (ShapeForm.WORK, ShapeForm.NONE)
#: the other non-GEMM passes each at the other efficiency as a whole, then with their memory time at the memory
#: efficiency (:attr:`~roofline.fidelity.fit.Params.passes`)
PASS_VARIANTS = (False, True)
#: the per-call dispatch (seconds) a stack with MLPerf Server runs is also fitted with, held, when no validate
#: report measured it: its step figures (every call of about one size) cannot tell a cost per call from the
#: per-token work, and the Server runs' calls of every size can
CALL_GRID = (2.5e-3, 5e-3, 1e-2, 2e-2)

#: a stack's cross-stack values of the classes it never fitted, as a profile fitted without a platform (None: on
#: every platform) may use them
CrossTable = Callable[[str | None], dict[str, Sourced]]
#: each platform's ``|log(predicted / measured)|`` over its Server runs, as the plan predicts them with the
#: profiles given per platform
ServerErrors = Callable[[dict[str, Params]], dict[str, list[float]]]


@dataclass
class FormSearch:
    """A stack's fitted figures and what its fits share; fits are cached by form and training platforms."""

    fitted: Sequence[Figure]
    dispatch: dict[str, float]
    calls: tuple[float, ...] = ()
    """the per-call values to hold (a stack with Server runs and no measured dispatch)"""
    cross: CrossTable | None = None
    server_errors: ServerErrors | None = None
    _fits: dict[tuple[FitForm, frozenset[str]], Params] = field(default_factory=dict, repr=False)
    _tables: dict[str, tuple[FitTable, np.ndarray]] = field(default_factory=dict, repr=False)
    _faint: dict[bool, frozenset[str]] = field(default_factory=dict, repr=False)

    @property
    def platforms(self) -> frozenset[str]:
        return frozenset(f.platform for f in self.fitted)

    def several_classes(self) -> bool:
        return len({c for f in self.fitted for s in f.steps for c in s.classes}) > 1

    def candidates(self, train: frozenset[str]) -> list[FitForm]:
        """the first-stage forms for training platforms ``train`` (:data:`SHAPE_VARIANTS`, :data:`CALL_GRID`)"""
        shapes = SHAPE_VARIANTS if len(train) >= MIN_PLATFORMS else FEW_PLATFORM_SHAPES
        return [form for passes in PASS_VARIANTS for form in
                [FitForm(shape, passes) for shape in shapes] + [FitForm(ShapeForm.WORK, passes, call_s=c)
                                                                for c in self.calls]]

    def fit(self, form: FitForm, train: frozenset[str], left_out: str | None = None) -> Params:
        """the profile in ``form`` fitted on ``train``'s figures, with the cross-stack values ``left_out`` may use"""
        key = (form, train)
        if key not in self._fits:
            figs = [f for f in self.fitted if f.platform in train]
            self._fits[key] = (fit(figs, self.dispatch, form.shape, form.call_s, form.passes, form.factors,
                                   self.faint_parts(form.passes)) if figs else Params(passes=form.passes))
        q = self._fits[key]
        return dataclasses.replace(q, cross=bare_values(self.cross(left_out))) if self.cross is not None else q

    def faint_parts(self, passes: bool) -> frozenset[str]:
        """the non-GEMM parts every fit holds at 1, from all the stack's figures' ceilings (no measured value)"""
        if passes not in self._faint:
            self._faint[passes] = faint_parts(FitTable.of(self.fitted), passes)
        return self._faint[passes]

    def _table(self, platform: str) -> tuple[FitTable, np.ndarray]:
        if platform not in self._tables:
            figs = [f for f in self.fitted if f.platform == platform]
            self._tables[platform] = FitTable.of(figs), np.array([f.measured for f in figs])
        return self._tables[platform]

    def errors(self, form: FitForm, train: frozenset[str]) -> list[float]:
        """each figure's ``|log(predicted / measured)|`` of ``train``'s platforms, each predicted by ``form`` fitted
        on the other training platforms (and their Server runs' where the stack has any)"""
        per = {q: self.fit(form, train - {q}, q) for q in sorted(train)}
        out: list[float] = []
        for q, params in per.items():
            table, measured = self._table(q)
            out += [abs(math.log(p / m)) for p, m in zip(table.predict_params(params), measured)]
        if self.server_errors is not None and self.calls:
            out += [e for es in self.server_errors(per).values() for e in es]
        return out

    def loss(self, form: FitForm, train: frozenset[str]) -> float:
        errs = self.errors(form, train)
        return statistics.fmean(errs) if errs else 0.0

    def choose(self, train: frozenset[str]) -> tuple[FitForm, float]:
        """the form ``train``'s own leave-one-out figures are predicted best in, and its loss"""
        forms = self.candidates(train)
        losses = [self.loss(c, train) for c in forms]
        k = first_best(losses)
        best, loss = forms[k], losses[k]
        if self.several_classes() and len(train) >= MIN_PLATFORMS:
            with_factors = dataclasses.replace(best, factors=True)
            other = self.loss(with_factors, train)
            if first_best([loss, other]) == 1:
                best, loss = with_factors, other
        return best, loss


def choose_forms(search: FormSearch, command: str) -> FormChoice:
    """The form on every platform and, nested, without each platform (the module docstring)."""
    every = search.platforms
    chosen, loss = search.choose(every)
    folds = {p: search.choose(every - {p})[0] for p in sorted(every)}
    n = len(search.fitted)
    names = sorted({c.label for c in search.candidates(every)})
    return FormChoice(chosen=chosen, folds=folds,
                      source=f"chosen by `{command}` among {len(names)} forms ({', '.join(names)}, and the best "
                             f"with a factor per platform where its figures use two classes or more) by the "
                             f"leave-one-platform-out |log error| of {n} figures on {len(every)} platforms (mean "
                             f"{loss:.3f} for the chosen one); each platform's fold chosen likewise without its "
                             "figures")


def fit_forms(search: FormSearch, choice: FormChoice) -> tuple[Params, dict[str, Params]]:
    """The profile fitted on every platform in the chosen form, and without each platform in its fold's form."""
    every = search.platforms
    full = search.fit(choice.chosen, every)
    per = {p: search.fit(choice.without(p), every - {p}, p) for p in sorted(every)}
    return full, per
