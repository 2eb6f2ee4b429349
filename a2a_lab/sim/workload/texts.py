"""Text banks of simulated messages and replies (Korean and English, like the reference's logs).

Texts are data the reference rules judge, never labels: a message of the ``request`` bank
is a request because :func:`a2a_lab.reference.runtime.classify_intent` says so (a test checks every
entry), and a ping-pong reply of the ``conclusion`` bank ends the loop because
:func:`a2a_lab.reference.runtime.should_terminate_ping_pong` finds the conclusion. The topics spread
over the Task-Monitor categories so the simulated log enriches into varied categories.
"""

from __future__ import annotations

from typing import Final

#: Messages by the intent the reference classifier gives them.
MESSAGES: Final[dict[str, tuple[str, ...]]] = {
    "request": (
        "스테이징 서버 배포 진행해줘",
        "회귀 테스트 스위트 돌려서 실패 케이스 정리해줘",
        "온보딩 가이드 문서 초안 작성해줘",
        "Q2 캠페인 전환 지표 분석해줘",
        "고객 문의 티켓 분류 부탁해",
        "계약서 약관 변경 사항 검토해줘",
    ),
    "question": (
        "How far along is the docker image rebuild for the gateway?",
        "릴리스 일정은 어떻게 되나요",
        "Could you check why the e2e suite is flaky on CI",
        "Which KPI should we report for the roadmap review?",
        "지난주 장애 원인은 어디에 정리되어 있나요?",
        "Can you share the current marketing funnel numbers",
    ),
    "collaboration": (
        "새 큐 아키텍처 설계 같이 논의해요",
        "Let's discuss the scope of the refactor before we implement it",
        "커뮤니티 피드백 반영 방향 의견 줘",
        "What do you think about moving the k8s deployment to blue-green",
        "비즈니스 전략 로드맵 함께 조율합시다",
        "Let's figure out the compliance policy for the new regulation",
    ),
    "notification": (
        "[NOTIFICATION] Deployment window opens at 18:00 KST",
        "[NO_REPLY_NEEDED] 회의록 공유합니다",
        "알림: 인프라 점검이 내일 오전에 있습니다",
        "신규 문서 가이드 링크 전달합니다",
    ),
    "result_report": (
        "[result] Benchmark finished: p95 latency down 12 %",
        "작업 완료: API 문서 정리 끝났습니다",
        "Research on churn root causes is completed, notes in the wiki",
        "분석 결과: 캠페인 A가 전환율이 더 높습니다",
    ),
    "escalation": (
        "[URGENT] Production incident: gateway returns 502 for every request",
        "[ESCALATION] 고객 문의 급증, 지원 인력 필요",
    ),
}

#: First replies of the target (long, no ``[outcome]``, not a conclusion).
REPLIES: Final[tuple[str, ...]] = (
    "I checked the deployment logs and the rollout on staging looks healthy so far.",
    "확인해보니 테스트 환경에서 재현됩니다. 원인 분석을 이어서 진행할게요.",
    "The draft is in the docs folder; the section on permissions still needs examples.",
    "지표를 보면 지난달 대비 전환이 조금 올랐고 이탈은 비슷한 수준입니다.",
    "Tickets are grouped by product area now, billing questions are the biggest group.",
    "약관 변경은 두 군데가 걸리는데 환불 규정 쪽은 법무 확인이 필요해 보입니다.",
)

#: Ping-pong replies that continue the conversation (pairwise far below the repetition
#: threshold, none short, none starting with a conclusion phrase).
TURNS: Final[tuple[str, ...]] = (
    "One more thing: the canary should stay at five percent until the error rate settles.",
    "그 부분은 캐시 무효화 순서 문제 같아요. 로그에서 타임스탬프를 비교해 볼게요.",
    "Should we also add a regression test for the timeout path before merging?",
    "배포 전에 롤백 절차를 문서에 한 줄 추가해 두면 좋겠습니다.",
    "The customer cohort from March behaves differently, maybe split the analysis there.",
    "우선순위는 장애 대응 먼저, 그다음 리팩토링으로 가는 게 맞을 것 같아요.",
    "I can take the monitoring dashboard part if you handle the migration script.",
    "예산 범위 안에서 실험 기간을 두 주로 늘리는 건 어떨까요?",
)

#: Replies that end the loop by the conclusion rule (long enough not to be minimal).
CONCLUSIONS: Final[tuple[str, ...]] = (
    "알겠습니다, 말씀하신 순서대로 진행하고 결과 공유드리겠습니다.",
    "Understood, I will take it from here and report back tomorrow.",
    "확인했습니다. 오늘 중으로 반영해서 다시 알려드릴게요.",
    "Got it, closing this thread and tracking the rest in the task.",
)

#: Replies that end the loop by the minimal-content rule.
MINIMAL: Final[tuple[str, ...]] = ("OK", "네", "Done.", "확인", "👍 sounds fine")

#: The explicit skip reply.
REPLY_SKIP: Final = "REPLY_SKIP"

#: Orchestration texts the simulator does not write itself, added by
#: :func:`a2a_lab.sim.output.inject.orchestration`, by what they say: why a task is blocked,
#: why a plan is rejected, a plan's title and summary, why a task is cancelled, why a spawn or
#: an unblock request failed.
ORCHESTRATION: Final[dict[str, tuple[str, ...]]] = {
    "block_reason": (
        "Waiting for staging DB credentials",
        "법무 검토 회신 대기 중",
        "Blocked on the API rate limit increase",
        "디자인 시안 확정 전이라 진행 불가",
    ),
    "plan_rejection": ("일정 근거가 부족합니다.", "Split the rollout into two steps first."),
    "plan_title": (
        "스테이징 배포 파이프라인 정비",
        "Q2 campaign conversion analysis",
        "온보딩 가이드 개편",
        "Gateway 502 incident follow-up",
        "고객 문의 분류 자동화",
        "계약서 약관 개정 검토",
        "Flaky e2e suite on CI",
        "커뮤니티 피드백 정리",
    ),
    "plan_summary": (
        "1) assess 2) design review 3) implement 4) test and deploy",
        "1) 현황 조사 2) 초안 작성 3) 리뷰 반영 4) 공유",
    ),
    "cancel_reason": ("요구사항 변경으로 중단", "Superseded by the incident response task"),
    "spawn_error": ("maxChildrenPerAgent exceeded", "spawn depth limit reached"),
    "unblock_error": ("agent session busy", "target agent offline"),
}
#: Display name, emoji and role of the sample's main agents (its ``openclaw.json``), and the
#: Discord user whose mention ``<@id>`` starts an auto-routed exchange with the agent.
AGENT_IDENTITIES: Final[dict[str, tuple[str, str, str, str]]] = {
    "main": ("메인", "🦞", "coordinator", "130050000004821007"),
    "ruda": ("루다", "🧭", "product manager", "130150079194821017"),
    "eden": ("이든", "🛠️", "engineering lead", "130250158384821027"),
    "seum": ("세움", "🚀", "infrastructure", "130350237574821037"),
    "bada": ("바다", "🔎", "research", "130450316764821047"),
    "haneul": ("하늘", "📣", "growth and customers", "130550395954821057"),
}
DISCORD_USER_IDS: Final[dict[str, str]] = {a: v[3] for a, v in AGENT_IDENTITIES.items()}
