"""Issue 18: an LLM judge endpoint that answers 200 with an error body or a truncated
reply never yields a verdict: the vote is an abstention carrying the error."""

from __future__ import annotations

import json

import pytest
from llm_fault_server import FaultServer

from auditor.judges.llm import LLMJudge
from auditor.types import ABSTAIN, JudgePair


def _completion(content: str, finish: str = "stop") -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
        }
    ).encode()


FAULTS = {
    "error_body": b'{"error": {"message": "model overloaded", "type": "server_error"}}',
    "truncated_body": _completion('{"label": "supported"}')[:40],
    "truncated_reply": _completion('{"label": "suppor', finish="length"),
    "prose_reply": _completion("Supported, I think."),
    "wrong_label": _completion('{"label": "true"}'),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_faulty_200_reply_is_an_abstention_with_its_error(fault: str) -> None:
    with FaultServer(script=[("body", FAULTS[fault])] * 8) as server:
        judge = LLMJudge(
            name="j",
            base_url=server.base_url,
            model="m",
            max_retries=1,
            backoff_base_s=0.0,
            backoff_max_s=0.0,
            timeout_s=5,
        )
        (vote,) = judge.judge_sync([JudgePair("The sky is blue.", ("The sky is blue.",))])
    assert vote.value == ABSTAIN and vote.error, vote
