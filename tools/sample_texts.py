"""Text banks of the sample generator: topics, message and reply templates, Korean and English.

Every topic carries keywords of one collaboration category of the Task-Monitor rules (§6), so
the rule classifier has realistic work to do (hits, ties, substring quirks such as ``docs``
matching ``cs``). The message templates are written to land in each intent of the runtime's
classifier (runtime §3); English requests deliberately contain no Korean request verb, so they
come out as ``question`` or ``collaboration`` exactly as they would in the reference.

Placeholders filled by the generator: ``{topic}``, ``{detail}``, ``{mention}``, ``{when}``,
``{eta}``, ``{opinion}``, ``{finding}``, ``{point}``, ``{point2}``, ``{pct}``, ``{link}``,
``{file}``.
"""

from __future__ import annotations

#: (category, Korean topic, English topic). Categories follow rules §6.
TOPICS: tuple[tuple[str, str, str], ...] = (
    ("engineering_build", "로그인 API 리팩토링", "the login API refactor"),
    ("engineering_build", "결제 모듈 버그 수정", "the payment module bugfix"),
    ("engineering_build", "알림 큐 기능 구현", "the notification queue feature"),
    ("engineering_build", "agent-step.ts 재시도 로직 개발", "the retry logic in agent-step.ts"),
    ("engineering_build", "빌드 캐시 개선 코드", "the build cache fix"),
    ("engineering_build", "대시보드 필터 신규 기능 구현", "the dashboard filter feature"),
    ("infra_ops", "staging 서버 배포", "the staging deployment"),
    ("infra_ops", "k8s 노드 장애 대응", "the k8s node incident"),
    ("infra_ops", "docker 이미지 경량화", "slimming the docker images"),
    ("infra_ops", "게이트웨이 인프라 점검", "the gateway infrastructure check"),
    ("infra_ops", "야간 배포 롤백 절차", "the deployment rollback runbook"),
    ("infra_ops", "운영 알림 임계값 조정", "the ops alert thresholds"),
    ("qa_validation", "회귀 테스트 스위트 정비", "the regression test suite"),
    ("qa_validation", "e2e 테스트 실패 원인", "the failing e2e tests"),
    ("qa_validation", "릴리스 1.8 QA 체크리스트", "the QA checklist for release 1.8"),
    ("qa_validation", "결제 흐름 검증", "validation of the checkout flow"),
    ("qa_validation", "품질 게이트 기준 테스트", "testing the quality gate criteria"),
    ("planning_decision", "Q2 로드맵 우선순위", "the Q2 roadmap priorities"),
    ("planning_decision", "멀티 에이전트 아키텍처 설계", "the multi-agent architecture design"),
    ("planning_decision", "온보딩 기획안", "the onboarding plan"),
    ("planning_decision", "스프린트 범위 의사결정", "the sprint scope decision"),
    ("planning_decision", "권한 정책 설계 초안", "the permission design draft"),
    ("research_analysis", "지연 시간 급증 원인 분석", "root cause analysis of the latency spike"),
    ("research_analysis", "경쟁사 가격 비교 리서치", "research to compare competitor pricing"),
    ("research_analysis", "LLM 벤치마크 조사", "the LLM benchmark"),
    ("research_analysis", "사용자 이탈 데이터 분석", "the churn data analysis"),
    ("research_analysis", "토큰 비용 조사", "research on token costs"),
    ("docs_knowledge", "API 가이드 문서 업데이트", "the API guide docs update"),
    ("docs_knowledge", "README 정리", "cleaning up the README"),
    ("docs_knowledge", "온보딩 wiki 기록", "the onboarding wiki page"),
    ("docs_knowledge", "회의록 정리", "the meeting notes documentation"),
    ("docs_knowledge", "릴리스 노트 문서", "the release notes doc"),
    ("growth_marketing", "신규 캠페인 카피", "copy for the new campaign"),
    ("growth_marketing", "가입 퍼널 전환 실험", "the signup funnel experiment"),
    ("growth_marketing", "마케팅 뉴스레터", "the marketing newsletter"),
    ("growth_marketing", "성장 지표 실험 설계", "the growth experiment"),
    ("customer_community", "고객 문의 티켓 응대", "the customer support ticket queue"),
    ("customer_community", "커뮤니티 피드백 정리", "triaging community feedback"),
    ("customer_community", "VIP 고객 문의 답변", "replies to enterprise customer tickets"),
    ("customer_community", "디스코드 커뮤니티 공지", "the Discord community announcement"),
    ("legal_compliance", "이용 약관 개정 법무 검토", "the terms of service legal review"),
    ("legal_compliance", "개인정보 규정 컴플라이언스", "privacy regulation compliance"),
    ("legal_compliance", "파트너 계약서 검토", "the partner contract"),
    ("legal_compliance", "데이터 보존 정책", "the data retention policy"),
    ("biz_strategy", "월간 매출 지표", "the monthly revenue KPI report"),
    ("biz_strategy", "2026 비즈니스 전략 메모", "the 2026 business strategy memo"),
    ("biz_strategy", "ROI 추정", "the ROI estimate"),
    ("biz_strategy", "파트너십 전략", "the partnership strategy"),
)

#: Message templates per intent and language (runtime §3 intents).
MESSAGES: dict[str, dict[str, tuple[str, ...]]] = {
    "request": {
        "ko": (
            "{mention}{topic} 부탁드립니다. {detail}",
            "{mention}{topic} 진행해줘. {detail}",
            "{topic} 관련해서 초안 작성해줘. {when}까지 필요해요.",
            "{topic} 좀 봐주세요. {detail}",
            "{topic} 검토해줘 — {detail}",
            "{mention}{topic} 처리해 줄 수 있어? 급한 건 아니야.",
            "{topic} 분석해줘. 결과는 이 스레드에 남겨줘.",
        ),
        "en": (
            "{mention}Please take care of {topic} by {when}. {detail}",
            "Could you pick up {topic}? {detail}",
            "Can you own {topic} this week? {detail}",
        ),
    },
    "question": {
        "ko": (
            "{topic} 어떻게 진행되고 있어요?",
            "{topic} 관련 최신 문서는 어디에 있나요?",
            "{topic} 마감이 언제인지 알려줘",
            "{mention}{topic} 지금 뭐가 막혀 있는 거예요?",
        ),
        "en": (
            "Is {topic} still on track for {when}?",
            "Where can I find the latest notes on {topic}?",
            "{mention}quick check: who owns {topic} now?",
        ),
    },
    "collaboration": {
        "ko": (
            "{topic} 같이 논의해볼까요? 제 생각엔 {opinion}",
            "{topic} 방향에 대해 의견 좀 줘. {detail}",
            "{topic} 범위를 함께 조율했으면 합니다. {opinion}",
            "{mention}{topic} 관련 피드백 받고 싶어요. {opinion}",
        ),
        "en": (
            "Let's discuss {topic} before we commit to anything. {opinion}",
            "What do you think about {topic}? {opinion}",
            "Can we brainstorm options for {topic}?",
            "{mention}I'd like to review together how we handle {topic}.",
        ),
    },
    "notification": {
        "ko": (
            "[NOTIFICATION] {topic} 완료 내용 공유합니다. {detail}",
            "알림: {topic} 일정이 {when}로 변경되었습니다.",
            "{topic} 회의록 전달합니다. {link}",
        ),
        "en": (
            "[NOTIFICATION] {topic} has been merged to main. {detail}",
            "FYI {topic} moved to {when}. [NO_REPLY_NEEDED]",
        ),
    },
    "escalation": {
        "ko": (
            "[URGENT] {topic} 관련 프로덕션 장애 발생, 즉시 확인 필요합니다. {detail}",
            "[ESCALATION] {topic} 3시간째 막혀 있어요. 결정이 필요합니다.",
        ),
        "en": ("[URGENT] {topic} is failing in production, need eyes now. {detail}",),
    },
    "result_report": {
        "ko": (
            "{topic} 작업 완료했습니다. {detail}",
            "{topic} 분석 결과 보고드립니다: {finding}",
            "[result] {topic}: {finding}",
        ),
        "en": ("[result] {topic} is done. {finding}", "Finished {topic}; {finding}."),
    },
}

#: First replies of the target, per intent of the message.
FIRST_REPLIES: dict[str, dict[str, tuple[str, ...]]] = {
    "request": {
        "ko": (
            "네, {topic} 바로 진행하겠습니다. {eta} 안에 1차 결과 공유드릴게요.",
            "요청하신 {topic} 건 시작했어요. {point}.",
        ),
        "en": (
            "Sure, I'll pick up {topic} now and share a first pass in {eta}.",
            "On it. {point}.",
        ),
    },
    "question": {
        "ko": (
            "{topic} 건은 현재 {pct}% 정도 진행됐고, {point}.",
            "자료는 {link} 에 정리돼 있습니다. {point}.",
        ),
        "en": ("{topic} is about {pct}% done; {point}.", "Everything is in {link}. {point}."),
    },
    "collaboration": {
        "ko": (
            "좋아요. {topic} 건은 {opinion} 어떻게 생각하세요?",
            "저는 조금 다르게 봐요. {point}.",
        ),
        "en": (
            "Agreed on the direction. {opinion} Thoughts?",
            "I see it a bit differently: {point}.",
        ),
    },
    "notification": {
        "ko": ("공유 고마워요, {topic} 반영해서 일정 다시 맞추겠습니다.",),
        "en": ("Thanks for the heads-up, I'll adjust my plan for {topic}.",),
    },
    "escalation": {
        "ko": ("지금 바로 들여다볼게요. {point}.",),
        "en": ("Looking at it right now. {point}.",),
    },
    "result_report": {
        "ko": ("수고하셨어요! {topic} 결과 확인했고, 후속으로 {point}.",),
        "en": ("Nice work on {topic}. Next up: {point}.",),
    },
}

#: Substantive ping-pong sentences (each at least 20 characters, none starts like a conclusion).
POINTS: dict[str, tuple[str, ...]] = {
    "ko": (
        "테스트 커버리지가 아직 70% 수준이라 회귀 테스트를 먼저 보강해야 할 것 같아요",
        "배포 전에 staging 서버에서 한 번 더 검증이 필요합니다",
        "API 응답 스키마가 바뀌어서 클라이언트 코드도 같이 수정해야 합니다",
        "지난주 장애 원인이 커넥션 풀 설정이었던 걸로 보여요",
        "문서에 예외 케이스가 빠져 있어서 가이드에 추가하겠습니다",
        "우선순위는 결제 쪽 버그가 먼저고 대시보드는 다음 스프린트로 미루는 게 좋겠어요",
        "고객 문의가 이번 주에만 40건 넘게 들어와서 FAQ 보강이 필요해 보여요",
        "계약서 7조 책임 제한 조항은 법무 확인 후 진행하는 게 안전합니다",
        "매출 지표는 주간 기준으로 3% 정도 올랐습니다",
        "캠페인 A/B 실험은 표본이 부족해서 일주일 더 돌려야 합니다",
        "모델을 바꾸면 토큰 비용이 30% 정도 절감될 것 같아요",
        "k8s 리소스 limit을 조정하면 OOM은 해결될 것 같습니다",
        "이 부분은 제가 초안 만들어서 오늘 안에 올려둘게요",
        "리뷰 코멘트 반영해서 PR 다시 올렸어요",
        "벤치마크를 비교해 보니 새 방식이 두 배 정도 빠릅니다",
        "재시도 로직에 지수 백오프를 넣으면 429 에러가 줄어들 거예요",
        "로그를 보면 타임아웃이 새벽 3시대에 몰려 있어요",
        "설계 문서에 시퀀스 다이어그램을 추가해 두었습니다",
    ),
    "en": (
        "test coverage is still around 70 percent, so the regression suite needs work first",
        "we should verify it on staging once more before the deploy",
        "the API response schema changed, so the client code has to be updated too",
        "last week's incident looks like a connection pool misconfiguration",
        "the guide is missing the edge cases, I will add them to the docs",
        "the payment bug should go first and the dashboard can wait a sprint",
        "we got over 40 customer tickets this week, the FAQ needs more answers",
        "clause 7 of the contract should get a legal review before we sign",
        "weekly revenue is up about 3 percent",
        "the A/B experiment needs another week, the sample is too small",
        "switching models would cut token cost by roughly 30 percent",
        "raising the k8s memory limit should fix the OOM kills",
        "I will put up a first draft later today",
        "I pushed the PR again with the review comments addressed",
        "the benchmark shows the new approach is about twice as fast",
        "exponential backoff in the retry loop should reduce the 429 errors",
        "the timeouts cluster around 3am according to the logs",
        "I added a sequence diagram to the design doc",
    ),
}

#: Replies that end a ping-pong by the reference's conclusion rule (20 characters or more).
CONCLUSIONS: dict[str, tuple[str, ...]] = {
    "ko": (
        "알겠습니다. 말씀하신 방향으로 오늘 중에 반영하겠습니다.",
        "확인했습니다. 나머지는 제가 마무리하고 결과 공유드릴게요.",
        "감사합니다! 이걸로 충분할 것 같아요, 여기서 마무리하겠습니다.",
        "네, 이해했습니다. 바로 적용해서 다시 알려드릴게요.",
        "완료 처리해 두겠습니다. 추가 이슈 있으면 다시 연락 주세요.",
    ),
    "en": (
        "Understood, I'll take it from here and report back when it's done.",
        "Got it, I'll proceed with the implementation as discussed.",
        "Thanks, that answers it. Closing the loop on my side.",
        "Noted. I'll update the ticket and move on to the next item.",
    ),
}

#: Replies short enough to end a ping-pong by the minimal-content rule.
MINIMAL: dict[str, tuple[str, ...]] = {
    "ko": ("넵 확인했어요", "좋습니다", "ㅇㅋ 진행할게요", "넵 👍"),
    "en": ("Sounds good.", "LGTM", "Will do.", "OK 👍"),
}

DETAILS: dict[str, tuple[str, ...]] = {
    "ko": (
        "PR #{n} 참고해 주세요.",
        "로그는 {link} 에 있어요.",
        "관련 이슈: ENG-{n}",
        "{file} 쪽 변경이 필요합니다.",
        "스크린샷은 스레드에 올렸어요.",
        "",
    ),
    "en": ("See PR #{n}.", "Logs: {link}", "Tracking in ENG-{n}.", "Touches {file}.", ""),
}

LINKS: tuple[str, ...] = (
    "https://github.com/pronto-lab/agent-hub/pull/{n}",
    "https://linear.app/pronto/issue/ENG-{n}",
    "https://grafana.internal/d/a2a-latency?from=now-6h",
    "https://notion.so/pronto/weekly-sync-{n}",
)

FILES: tuple[str, ...] = (
    "src/agents/tools/agent-step.ts",
    "src/gateway/call.ts",
    "scripts/task-monitor-server.ts",
    "infra/k8s/gateway-deployment.yaml",
    "docs/guide/a2a.md",
    "apps/web/src/pages/billing.tsx",
    "packages/payments/src/refund.ts",
)

WHEN: dict[str, tuple[str, ...]] = {
    "ko": ("오늘 18시", "내일 오전", "금요일", "이번 주 안", "다음 스프린트 전"),
    "en": ("EOD today", "tomorrow morning", "Friday", "the end of the week"),
}
ETA: dict[str, tuple[str, ...]] = {
    "ko": ("30분", "1시간", "오늘 오후", "내일 오전"),
    "en": ("30 minutes", "an hour", "the afternoon"),
}
OPINIONS: dict[str, tuple[str, ...]] = {
    "ko": (
        "우선 최소 기능부터 배포하고 지표를 보는 게 좋겠어요.",
        "기존 구조를 유지하고 어댑터만 추가하는 쪽이 안전해 보여요.",
        "리스크가 커서 단계적으로 나누는 게 낫겠습니다.",
    ),
    "en": (
        "I'd ship the minimal version first and watch the metrics.",
        "Keeping the current structure and adding an adapter seems safer.",
        "Splitting it into two phases lowers the risk.",
    ),
}
FINDINGS: dict[str, tuple[str, ...]] = {
    "ko": (
        "p95 지연이 1.8초에서 0.9초로 줄었습니다",
        "실패 테스트 12건 중 10건 수정, 2건은 flaky로 분류했습니다",
        "문의 유형 상위 3개가 전체의 60%입니다",
        "월 $1,200 비용 절감이 예상됩니다",
        "변경 사항은 PR #{n}에 올렸습니다",
    ),
    "en": (
        "p95 latency dropped from 1.8s to 0.9s",
        "10 of 12 failing tests fixed, 2 marked flaky",
        "the top 3 ticket types make up 60 percent of volume",
        "we expect to save about $1,200 a month",
        "changes are in PR #{n}",
    ),
}

#: Tasks given to spawned sub-agents (``sessions_spawn`` task text).
SPAWN_TASKS: dict[str, tuple[str, ...]] = {
    "ko": (
        "{topic} — {file} 기준으로 구현하고 테스트까지 돌려줘",
        "{topic} 관련 자료 조사해서 요약 보고서 작성",
        "{topic} 초안 만들고 체크리스트로 검증",
        "{topic} 현황 분석해서 원인 후보 3개 정리",
    ),
    "en": (
        "Implement {topic} in {file} and run the unit tests.",
        "Investigate {topic} and write a short summary with sources.",
        "Draft {topic} and check it against the checklist.",
    ),
}

#: What a sub-agent reports when its run finishes.
SUBAGENT_RESULTS: dict[str, tuple[str, ...]] = {
    "ko": (
        "[result] {topic}: {finding}. 변경 파일: {file}",
        "작업 완료 — {finding}. 자세한 내용은 {link}",
        "{topic} 조사 결과 보고: {finding}",
    ),
    "en": ("Done. {finding}. Changed: {file}", "[result] {topic}: {finding}. Details in {link}"),
}

PLAN_SUMMARIES: dict[str, tuple[str, ...]] = {
    "ko": (
        "1) 현황 파악 2) 설계 리뷰 3) 구현 4) 테스트 및 배포",
        "범위 확정 후 단계별로 진행, 리스크 항목은 별도 관리",
    ),
    "en": (
        "1) assess 2) design review 3) implement 4) test and deploy",
        "Scope first, then phased rollout with a rollback plan",
    ),
}
PLAN_REJECTIONS: tuple[str, ...] = (
    "범위가 너무 넓습니다. 1단계만 먼저 진행해 주세요.",
    "Missing a rollback plan.",
    "일정 근거가 부족합니다.",
)
CANCEL_REASONS: tuple[str, ...] = (
    "요구사항 변경으로 중단",
    "중복 작업 (다른 태스크로 통합)",
    "Superseded by a newer task",
    "우선순위 하락",
)
BLOCK_REASONS: dict[str, tuple[str, ...]] = {
    "ko": (
        "스테이징 DB 접근 권한이 필요합니다",
        "디자인 시안 확정 전까지 진행 불가",
        "API 키 발급 대기 중",
        "법무 검토 결과 대기",
    ),
    "en": (
        "Waiting for staging DB credentials",
        "Blocked on the final design",
        "Need an API key from ops",
    ),
}
UNBLOCK_REPLIES: dict[str, tuple[str, ...]] = {
    "ko": (
        "[NOTIFICATION] 요청하신 권한 처리했습니다. 이제 진행 가능합니다.",
        "확인해서 해결해 두었어요. 작업 이어가셔도 됩니다.",
    ),
    "en": (
        "[NOTIFICATION] Access granted, you are unblocked.",
        "Resolved on my side, you can continue.",
    ),
}
SPAWN_ERRORS: tuple[str, ...] = (
    "gateway timeout after 10000ms",
    "sessions.patch failed: session store locked",
    "agent lane busy: max concurrent subagent runs reached",
)
SUBAGENT_ERRORS: tuple[str, ...] = (
    "context_length_exceeded: maximum context window",
    "tool execution failed: ENOENT",
    "overloaded",
)
NOT_JSON_LINES: tuple[str, ...] = (
    "Error: EPIPE: broken pipe, write",
    "[gateway] restarting after SIGTERM",
    "<<< truncated by logrotate >>>",
)
STACK_TRACE_LINES: tuple[str, ...] = (
    "Error: connect ETIMEDOUT 10.0.3.17:5432",
    "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
    "    at PaymentsRepository.refund (packages/payments/src/refund.ts:88:13)",
    "    at async RefundWorker.process (apps/worker/src/refund-worker.ts:41:7)",
    "    at async Queue.run (packages/queue/src/queue.ts:212:9)",
)
