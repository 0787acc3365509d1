"""The drill's topics in both languages: an interviewer's follow-up questions on tool use, each
with its live demonstration and the points a strong answer covers (cli/_drilling.py asks them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Lang = Literal["zh", "en"]


@dataclass(frozen=True)
class Words:
    """One text in both languages."""

    zh: str
    en: str

    def in_lang(self, lang: Lang) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class Demo:
    """A real toolcall command run against the offline model: `command` with `question` (in the
    drill's language) and `flags`. The drill adds `--model offline --no-trace` itself."""

    command: Literal["run", "compare"]
    question: Words
    flags: tuple[str, ...]
    watch: Words
    """What to look for in the output: the fault or limit the demonstration is about."""


@dataclass(frozen=True)
class Topic:
    name: str
    question: Words
    demos: tuple[Demo, ...]
    points: tuple[Words, ...]
    aliases: tuple[str, ...] = ()
    """Former names `--topic` still takes: kept interview records name topics by them."""


class UnknownTopic(LookupError):
    pass


_WEATHER = Words("上海今天天气怎么样？", "What is the weather in Shanghai today?")
_TWO_CITIES = Words(
    "上海和北京今天天气怎么样？", "What's the weather in Shanghai and Beijing today?"
)

TOPICS: tuple[Topic, ...] = (
    Topic(
        name="ending",
        question=Words("你的循环怎么终止？", "How does your loop end?"),
        demos=(
            Demo(
                "run",
                Words("12 乘以 7 是多少？", "What is 12 times 7?"),
                (),
                Words(
                    "第二轮的回复里没有工具调用：循环由模型自己结束（stopped: answered）。",
                    "The second reply holds no tool call: the model itself ends the loop "
                    "(stopped: answered).",
                ),
            ),
            Demo(
                "run",
                _WEATHER,
                ("--max-iterations", "1"),
                Words(
                    "一轮之后就到了上限：循环被最大轮数截停，给出不再调用工具的尽力回答"
                    "（stopped: limit）。",
                    "After one iteration the limit is reached: the loop is cut off, and a "
                    "best-effort answer without tools is given (stopped: limit).",
                ),
            ),
        ),
        points=(
            Words(
                "第一层：模型自主结束，回复里不再有工具调用就退出循环",
                "First guard: the model ends it; a reply with no tool call ends the loop",
            ),
            Words(
                "第二层：最大轮数限制（max_iterations），到了就停",
                "Second guard: a maximum number of iterations",
            ),
            Words(
                "第三层：超时熔断（整次运行的超时，每个工具的超时）",
                "Third guard: timeouts as a circuit breaker (for the whole run, for each tool)",
            ),
            Words(
                "被截停时不是默默返回：给尽力回答，或明确告诉用户为什么停了",
                "Cut off, it does not return silently: a best-effort answer, or a clear "
                "word on why it stopped",
            ),
            Words(
                "调用方能区分“答完了”和“被截停”（停止原因、退出码）",
                "The caller can tell 'answered' from 'cut off' (a stop reason, an exit code)",
            ),
        ),
    ),
    Topic(
        name="tool-error",
        question=Words("工具返回出错怎么办？", "What if a tool fails?"),
        demos=(
            Demo(
                "run",
                Words("计算 1/0", "What is 1/0?"),
                (),
                Words(
                    "calculate 抛出异常：错误作为工具结果回传，循环没有崩，模型据此回答。",
                    "calculate raises: the error goes back as the tool's result, the loop does "
                    "not crash, and the model answers from it.",
                ),
            ),
            Demo(
                "run",
                _WEATHER,
                ("--strategy", "schema", "--faults", "wrong_param"),
                Words(
                    "参数名写错（invalid_arguments）：错误回传后，模型下一轮自己改对了——自我纠错。",
                    "A wrong argument name (invalid_arguments): the error is fed back and the "
                    "model fixes its call in the next iteration — self-correction.",
                ),
            ),
        ),
        points=(
            Words(
                "执行层捕获异常，不让一个工具的错误打断整个循环",
                "The execution layer catches the exception; one tool's error does not break "
                "the loop",
            ),
            Words(
                "把错误作为 tool 消息回传，带同一个 tool_call_id",
                "The error goes back as a tool message, with the same tool_call_id",
            ),
            Words(
                "错误信息要让模型能改：说清哪里错、该怎么改（模型自我纠错的例子）",
                "The error says what to fix, so the model can correct itself (give an example)",
            ),
            Words(
                "区分参数校验失败和执行失败；可重试的与不可重试的",
                "Tell a validation failure from an execution failure; retryable from not",
            ),
            Words(
                "限制连续失败的轮数，别让模型在错误上打转",
                "Limit the rounds that fail in a row, so the model cannot circle on an error",
            ),
        ),
    ),
    Topic(
        name="parallel",
        question=Words(
            "多个工具并行调用怎么处理？tool_call_id 有什么用？",
            "How do you handle parallel tool calls? What is tool_call_id for?",
        ),
        demos=(
            Demo(
                "run",
                _TWO_CITIES,
                ("--strategy", "schema"),
                Words(
                    "一条回复里两个 get_weather 调用；"
                    "回传的两条 tool 消息各带自己的 id（call_…）。",
                    "One reply with two get_weather calls; the two tool messages fed back each "
                    "carry their own id (call_…).",
                ),
            ),
        ),
        points=(
            Words(
                "遍历一条回复里的所有 tool_calls，不只取第一个",
                "Go through every tool call in the reply, not just the first",
            ),
            Words(
                "每个结果回传时带各自的 tool_call_id，模型靠它把结果对上调用",
                "Each result goes back with its own tool_call_id; that is how the model pairs "
                "results with calls",
            ),
            Words(
                "互不依赖的只读调用可以并发执行；结果按 id 对应，不靠顺序",
                "Independent read-only calls may run concurrently; results match by id, not "
                "by order",
            ),
            Words(
                "一个调用失败不丢掉其他调用的结果，每个调用都要有回传",
                "One call failing does not drop the others; every call gets a result back",
            ),
        ),
    ),
    Topic(
        name="malicious",
        question=Words(
            "如何防止模型注入恶意参数？", "How do you guard against malicious arguments?"
        ),
        demos=(
            Demo(
                "run",
                Words("把 5 公里换算成英里", "Convert 5 km to miles"),
                ("--faults", "unknown_tool,extra_arg,wrong_type"),
                Words(
                    "不存在的工具名被白名单拒绝（unknown_tool）；工具不接受的参数被校验去掉，"
                    '调用不带它执行，并告诉模型（left out）；"5" 按 schema 转成数字。',
                    "A tool name not on the list is refused (unknown_tool); an argument the "
                    "tool does not take is caught by validation: the call runs without it and "
                    'the model is told (left out); "5" is coerced to a number by the schema.',
                ),
            ),
        ),
        points=(
            Words(
                "工具名白名单：只执行注册过的工具",
                "A whitelist of tool names: only registered tools run",
            ),
            Words(
                "参数类型校验（JSON Schema）：多余、缺失、类型错的参数都拒绝或按规则转换",
                "Argument validation (JSON Schema): extra, missing or mistyped arguments are "
                "refused or coerced by rule",
            ),
            Words(
                "权限校验：有副作用的工具要用户确认或按策略拒绝",
                "Permission checks: a tool with side effects needs approval, or a policy "
                "refuses it",
            ),
            Words(
                "永远不要直接执行模型传来的代码（不 eval/exec）；计算器只允许纯表达式",
                "Never execute code the model sends (no eval/exec); a calculator takes pure "
                "expressions only",
            ),
            Words(
                "执行有边界：超时、资源限制、隔离进程",
                "Execution has bounds: timeouts, resource limits, an isolated process",
            ),
        ),
    ),
    Topic(
        name="hard-answer",
        question=Words(
            "明明该调用工具，模型却直接硬答，怎么办？",
            "The model answers from memory instead of calling the tool (硬答): what do you do?",
        ),
        demos=(
            Demo(
                "run",
                _WEATHER,
                ("--faults", "no_tool"),
                Words(
                    "0 次工具调用就给了一个编出来的天气：从回复本身看不出错，只有运行记录能发现。",
                    "Zero tool calls and a made-up forecast: nothing in the reply gives it away; "
                    "only the run's record shows it.",
                ),
            ),
        ),
        points=(
            Words(
                "症状：需要实时数据的问题，模型不调用工具直接回答",
                "The symptom: a question that needs live data answered without a tool call",
            ),
            Words(
                "原因一：工具的 description 写得太抽象，模型不知道该用它",
                "Cause one: a tool description too abstract for the model to know when to use it",
            ),
            Words(
                "原因二：system prompt 没有硬规则；加一条“动态信息必须先调用工具”",
                "Cause two: no hard rule in the system prompt; add 'dynamic information needs a "
                "tool call first'",
            ),
            Words(
                "能强制时用 tool_choice（required / 指定工具）",
                "Where you can, force it with tool_choice (required, or a named tool)",
            ),
            Words(
                "排查时先看有没有“该调用却硬答”：查记录里的工具调用数",
                "In troubleshooting, check for it first: count the tool calls in the record",
            ),
        ),
    ),
    Topic(
        name="endless-loop",
        question=Words(
            "模型反复调用同一个工具，陷入死循环，怎么办？",
            "The model calls the same tool again and again, an endless loop: what do you do?",
        ),
        demos=(
            Demo(
                "run",
                _WEATHER,
                ("--faults", "repeat_call", "--max-iterations", "2"),
                Words(
                    "同样的调用又来一次：直接复用上次结果（repeated call）；到轮数上限后停止"
                    "（stopped: limit）。",
                    "The same call again: the earlier result is reused (repeated call); at the "
                    "iteration limit the loop stops (stopped: limit).",
                ),
            ),
        ),
        points=(
            Words("最大迭代轮数兜底", "A maximum number of iterations as the backstop"),
            Words(
                "识别同名同参的重复调用：直接返回上次结果，不再执行",
                "Spot a call repeated with the same arguments: return the earlier result, do "
                "not run it again",
            ),
            Words(
                "并追加提示“你已经查过这个数据了，请基于现有信息继续”",
                "And add a note: 'you already have this data; go on from what you have'",
            ),
            Words(
                "到上限时给尽力回答或说明原因，而不是报错退出",
                "At the limit, a best-effort answer or a stated reason, not a crash",
            ),
        ),
    ),
    Topic(
        name="long-result",
        question=Words(
            "工具返回的结果太长，模型开始胡说，怎么办？",
            "A tool returns a very long result and the model starts making things up: what "
            "do you do?",
        ),
        demos=(
            Demo(
                "run",
                _WEATHER,
                ("--max-result-chars", "100"),
                Words(
                    "结果在回传前被截到 100 个字符，并附上“result cut”说明，"
                    "模型知道它只看到一部分。",
                    "The result is cut to 100 characters before it is fed back, with a 'result "
                    "cut' note, so the model knows it sees only part.",
                ),
            ),
        ),
        points=(
            Words(
                "原因：上下文超过了模型的有效注意力窗口",
                "The cause: the context outgrows the model's effective attention window",
            ),
            Words(
                "办法一：截断，只保留关键字段，并告诉模型被截了",
                "Fix one: truncate, keep the key fields, and tell the model it was cut",
            ),
            Words(
                "办法二：工具支持参数化输出，比如 limit 只返回最新 N 条",
                "Fix two: let the tool take a parameter such as limit, returning the latest N",
            ),
            Words(
                "办法三：用一次模型调用把长结果摘要成几句话再喂回循环",
                "Fix three: summarise the long result with one model call before feeding it back",
            ),
            Words(
                "留意上下文窗口：旧轮次的结果可以裁掉",
                "Watch the context window: results of old rounds can be dropped",
            ),
        ),
    ),
    Topic(
        name="strategies",
        aliases=("schemes",),
        question=Words(
            "regex（提示词+解析）、schema（原生 function calling）和 stream（流式解析），怎么选？"
            "什么时候还需要 loop（Agent 循环）？",
            "How do you choose among regex (prompt + parsing), schema (native function calling) "
            "and stream (parsing as it arrives), and when do you need the loop (the agent loop) "
            "on top?",
        ),
        demos=(
            Demo(
                "compare",
                _TWO_CITIES,
                ("--faults", "broken_batch"),
                Words(
                    "同一个问题、同一个故障（一批调用里有一个 JSON 坏了）："
                    "看各策略的解析错误和恢复；"
                    "schema json 的约束输出不会产生坏 JSON。",
                    "One question, one fault (a batch of calls with one broken JSON): compare "
                    "each strategy's parse errors and recovery; schema json's constrained output "
                    "cannot produce the broken JSON.",
                ),
            ),
        ),
        points=(
            Words(
                "regex（提示词+解析）：任何模型都能用，但格式稳定性靠运气，适合作降级",
                "regex (prompt + parsing): works with any model, but the format is luck; a "
                "fallback",
            ),
            Words(
                "schema（原生 function calling / 结构化输出）：格式可靠，需要模型和服务支持",
                "schema (native function calling, structured output): a reliable format, "
                "needs the model and server to support it",
            ),
            Words(
                "stream（流式解析）：边到边解析，调用一完整就能执行，延迟最低；"
                "但要处理跨 chunk 切开的标签和被截断的流，最难写",
                "stream (parsing as it arrives): each call runs as soon as it is complete, the "
                "lowest latency; but tags split across chunks and cut streams make it the "
                "hardest to write",
            ),
            Words(
                "三种策略都跑在同一个 loop（Agent 循环）里：多步任务要它，也要终止和防护",
                "All three run inside the same loop (the agent loop): multi-step tasks need it, "
                "and it needs ending rules and guards",
            ),
            Words(
                "本质是选“把多少控制权交给模型”",
                "At heart it is choosing how much control to hand to the model",
            ),
            Words(
                "生产上混合：常规走 schema，复杂分支进 loop，降级走 regex",
                "In production, a mix: schema for the usual path, the loop for complex "
                "branches, regex as the fallback",
            ),
        ),
    ),
)


def find_topic(name: str) -> Topic:
    for topic in TOPICS:
        if name == topic.name or name in topic.aliases:
            return topic
    names = ", ".join(topic.name for topic in TOPICS)
    raise UnknownTopic(f"no drill topic named {name!r}; the topics: {names}")


LABELS: dict[str, Words] = {
    "answer": Words(
        "你的回答（空行结束；直接回车或 Ctrl-D 跳过）：",
        "Your answer (an empty line ends it; Enter or Ctrl-D at once skips):",
    ),
    "skipped": Words("（跳过）", "(skipped)"),
    "demo": Words("现场演示", "Demonstration"),
    "watch": Words("看这里", "Watch for"),
    "points": Words("好的回答会讲到：", "A strong answer covers:"),
    "mark": Words("你讲到了吗？[y/n] ", "Did you cover it? [y/n] "),
    "topic_score": Words("本题得分", "Score for this question"),
    "total": Words("总分", "Total"),
}
"""The drill's own words around the topics, in both languages."""


def label(key: str, lang: Lang) -> str:
    return LABELS[key].in_lang(lang)
