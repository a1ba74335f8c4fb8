from __future__ import annotations

import itertools

import pytest

from jupyter_agent.errors import IllegalTransition
from jupyter_agent.states import TERMINAL, TERMINAL_FOR, AgentState, check_transition

S = AgentState

LEGAL = {
    (S.idle, S.running),
    (S.running, S.thinking),
    (S.thinking, S.running),
    (S.thinking, S.tool_executing),
    (S.tool_executing, S.waiting_user),
    (S.waiting_user, S.tool_executing),
    (S.tool_executing, S.running),
    (S.running, S.paused),
    (S.paused, S.running),
    (S.running, S.completed),
    (S.thinking, S.cancelled),
    (S.tool_executing, S.error),
    (S.waiting_user, S.cancelled),
    (S.paused, S.cancelled),
}
ILLEGAL = {
    (S.completed, S.running),
    (S.cancelled, S.running),
    (S.error, S.idle),
    (S.idle, S.thinking),
    (S.paused, S.thinking),
    (S.thinking, S.paused),
    (S.running, S.idle),
    (S.completed, S.cancelled),
}


@pytest.mark.parametrize(("a", "b"), sorted(LEGAL))
def test_legal_transitions_pass(a, b):
    check_transition(a, b)


@pytest.mark.parametrize(("a", "b"), sorted(ILLEGAL))
def test_illegal_transitions_raise(a, b):
    with pytest.raises(IllegalTransition, match=f"{a.value} → {b.value}"):
        check_transition(a, b)


def test_terminal_states_are_final_and_reachable_from_every_working_state():
    for terminal, other in itertools.product(TERMINAL, S):
        with pytest.raises(IllegalTransition):
            check_transition(terminal, other)
    for state in S:
        if not state.terminal:
            for terminal in TERMINAL:
                check_transition(state, terminal)


def test_each_stop_reason_ends_in_its_state():
    assert TERMINAL_FOR["completed"] is S.completed
    assert TERMINAL_FOR["error"] is S.error
    for reason in ("manual_stop", "iteration_limit", "time_limit", "budget", "input_timeout"):
        assert TERMINAL_FOR[reason] is S.cancelled
