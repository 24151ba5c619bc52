"""JVM stack traces in a service log: frames of the runtime and of the frameworks an
application runs on (Spring, Tomcat, Jakarta servlets, Netty, ...) are library frames; the
application's frames, the exception and the log lines stay."""

from __future__ import annotations

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines, is_user_frame

FRAMEWORK = [
    "java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)",
    "java.base/java.lang.reflect.Method.invoke(Method.java:580)",
    "org.springframework.web.method.support.InvocableHandlerMethod.doInvoke(InvocableHandlerMethod.java:255)",
    "org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)",
    "org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:885)",
    "jakarta.servlet.http.HttpServlet.service(HttpServlet.java:658)",
    "org.apache.catalina.core.ApplicationFilterChain.internalDoFilter(ApplicationFilterChain.java:195)",
    "io.netty.channel.AbstractChannelHandlerContext.invokeChannelRead(AbstractChannelHandlerContext.java:444)",
    "com.fasterxml.jackson.databind.ObjectMapper.readValue(ObjectMapper.java:3629)",
    "org.apache.tomcat.util.threads.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:659)",
    "java.base/java.lang.Thread.run(Thread.java:1583)",
]
BUILD_TOOLS = [
    "scala.sys.package$.error(package.scala:27)",
    "sbt.Execute.work(Execute.scala:244)",
    "org.gradle.internal.operations.DefaultBuildOperationRunner.run(DefaultBuildOperationRunner.java:47)",
    "app//org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:38)",  # gradle's loader
    "org.hamcrest.MatcherAssert.assertThat(MatcherAssert.java:20)",
    "androidx.test.runner.AndroidJUnitRunner.onStart(AndroidJUnitRunner.java:444)",
]


def service_log(requests: int = 6) -> str:
    out = []
    for k in range(requests):
        order = 300 + 17 * k
        out += [
            f"2026-11-30T10:1{k}:03.512Z  INFO 4242 --- [nio-8080-exec-{k + 1}] "
            f"c.e.shop.web.OrderController : GET /orders/{order}",
            f"2026-11-30T10:1{k}:03.530Z ERROR 4242 --- [nio-8080-exec-{k + 1}] "
            "o.a.c.c.C.[.[.[/].[dispatcherServlet] : Servlet.service() threw exception",
            'java.lang.NullPointerException: Cannot invoke "com.example.shop.Order.total()" '
            'because "order" is null',
            f"\tat com.example.shop.service.InvoiceService.render(InvoiceService.java:{41 + k})",
            "\tat com.example.shop.web.OrderController.invoice(OrderController.java:88)",
            *[f"\tat {frame}" for frame in FRAMEWORK],
        ]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("frame", FRAMEWORK + BUILD_TOOLS)
def test_runtime_and_framework_frames_are_not_user_code(frame: str) -> None:
    assert not is_user_frame(f"\tat {frame}")


@pytest.mark.parametrize(
    "frame",
    [
        "com.example.shop.web.OrderController.invoice(OrderController.java:88)",
        "org.example.App.main(App.java:3)",
        "io.nettyx.Relay.pump(Relay.java:12)",  # a package that only starts like one
        "javalin.Routes.get(Routes.java:5)",
        "app//com.example.shop.CartTest.total(CartTest.java:12)",
    ],
)
def test_application_frames_are_user_code(frame: str) -> None:
    assert is_user_frame(f"\tat {frame}")


def test_a_library_frame_above_the_next_log_line_is_no_fact() -> None:
    facts = {line for _, line in critical_lines(service_log(2), "tool_result")}
    assert "at com.example.shop.service.InvoiceService.render(InvoiceService.java:41)" in facts
    assert not any("ThreadPoolExecutor" in line or "Thread.run" in line for line in facts)


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_framework_frames_go_and_the_application_stays(mode: str) -> None:
    text = service_log()
    compressed, saved = compress_soundly(tool_output(text, "tail -n 120 logs/shop.log"), mode)
    for k in range(6):
        assert f"InvoiceService.java:{41 + k})" in compressed
        assert f"GET /orders/{300 + 17 * k}" in compressed
    assert "NullPointerException" in compressed
    assert "DispatcherServlet.doDispatch" not in compressed
    assert "ThreadPoolExecutor$Worker.run" not in compressed
    assert saved > 0.5, saved


def test_a_bare_error_headline_gets_its_first_user_frame() -> None:
    # node's uncaught ``Error: boom``: its first frame in user code is a fact
    text = "\n".join(
        [
            "Error: boom",
            "    at Layer.handle (/app/node_modules/express/lib/router/layer.js:95:5)",
            "    at handler (/app/src/server.js:12:11)",
            "    at next (/app/node_modules/express/lib/router/route.js:149:13)",
        ]
    )
    facts = critical_lines(text + "\n", "tool_result")
    assert ("stack_frame", "at handler (/app/src/server.js:12:11)") in facts
    assert not any("node_modules" in line for _, line in facts)
