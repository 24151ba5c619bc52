"""Corpus captures of the native toolchains: builds, linters, test runners and crash reports.

Each generator writes a small project whose size and defects come from a seeded
random choice (so a build is deterministic up to the programs' own output), runs
the real program on it and returns what it printed:

- ``make -k`` over a dozen C modules (gcc warnings with their snippets, two
  modules that do not compile), and ``cmake --build`` of a C++ library;
- ``valgrind --leak-check=full`` and an AddressSanitizer run of C programs;
- ``cargo clippy`` and ``cargo test`` of a Rust crate (offline, no dependencies);
- ``go test -race -v`` of a Go package with a data race and failing subtests;
- ``javac`` of Java sources with errors, and a Java program's chained exception;
- ``mvn -B test`` of a Maven project (JUnit 5 under surefire, ``-Xlint`` warnings, failing
  tests) and ``mvn -B compile`` of one that does not compile; the plugins come from Maven
  Central (skipped when it cannot be reached);
- ``node --test`` (Node's own runner) with failing assertions;
- an npm project (typescript, eslint and vitest installed from the registry): ``tsc
  --noEmit --pretty`` with colours, ``eslint`` and ``vitest run``; skipped when the
  install fails (no registry).

A program missing from the PATH is skipped, as in :mod:`workers.bench.corpus`.
"""

from __future__ import annotations

import json
import random
import shutil
import textwrap
from pathlib import Path

from workers.bench.programs import Capture, Runner, first_line, go_env
from workers.core.ansi import strip_ansi

__all__ = ["toolchain_captures"]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


# -- C with make ------------------------------------------------------------------------------

C_MODULES = (
    "arena", "bitset", "crc32", "deque", "hashmap", "heap", "intern", "json", "lexer",
    "pool", "queue", "ringbuf", "sha1", "strbuf", "trie", "utf8",
)  # fmt: skip


def _c_module(name: str, rng: random.Random, broken: bool) -> str:
    """A C module with the warnings gcc -Wall -Wextra reports, and an error when ``broken``."""
    parts = [f'#include <stdlib.h>\n#include <string.h>\n#include "{name}.h"\n']
    for i in range(rng.randint(3, 7)):
        fn = f"{name}_op{i}"
        kind = rng.choice(("unused", "sign", "param", "clean", "unused", "sign"))
        if kind == "unused":
            parts.append(
                f"int {fn}(const int *items, int n) {{\n"
                f"    int total = 0;\n    int scratch{i};\n"
                "    for (int k = 0; k < n; k++) total += items[k];\n    return total;\n}\n"
            )
        elif kind == "sign":
            parts.append(
                f"int {fn}(const char *text, int limit) {{\n"
                "    int hits = 0;\n"
                "    for (int k = 0; k < strlen(text); k++) if (text[k] == ',') hits++;\n"
                "    return hits > limit ? limit : hits;\n}\n"
            )
        elif kind == "param":
            parts.append(f"long {fn}(long seed, int flags) {{\n    return seed * {i + 31}L;\n}}\n")
        else:
            parts.append(f"int {fn}(int x) {{\n    return x ^ {rng.randint(2, 999)};\n}}\n")
    if broken:
        parts.append(
            f"size_t {name}_size(const char *key) {{\n"
            f"    {name}_entry *e = lookup_{name}(key);\n"
            "    return e->len + missing_offset;\n}\n"
        )
    return "\n".join(parts)


def make_captures(run: Runner, root: Path) -> list[Capture]:
    if not (run.have("make") and run.have("gcc")):
        return []
    rng = random.Random(13)
    proj = root / "cutil"
    names = C_MODULES[: rng.randint(12, 16)]
    broken = {names[3], names[9]}
    files: dict[str, str] = {}
    for name in names:
        files[f"src/{name}.h"] = f"#pragma once\n#include <stddef.h>\ntypedef int {name}_id;\n"
        files[f"src/{name}.c"] = _c_module(name, rng, name in broken)
    objs = " ".join(f"build/{n}.o" for n in names)
    files["Makefile"] = (
        "CC = gcc\nCFLAGS = -Wall -Wextra -O1 -std=c11\n\n"
        f"libcutil.a: {objs}\n\tar rcs $@ $^\n\n"
        "build/%.o: src/%.c\n\t@mkdir -p build\n\t$(CC) $(CFLAGS) -c $< -o $@\n"
    )
    _write(proj, files)
    text = run.run(["make", "-k"], proj, timeout=180)
    if not text:
        return []
    return [
        Capture(
            "make-k",
            "make -k",
            text,
            "Build the C utility library and tell me what breaks.",
            first_line(text, "error:", default="make output above."),
        )
    ]


# -- C++ with cmake ---------------------------------------------------------------------------


def cmake_captures(run: Runner, root: Path) -> list[Capture]:
    if not (run.have("cmake") and run.have("g++") and run.have("make")):
        return []
    proj = root / "geom"
    shapes = ("circle", "square", "polygon", "segment", "bezier", "ellipse")
    files = {
        "CMakeLists.txt": (
            "cmake_minimum_required(VERSION 3.10)\nproject(geom CXX)\n"
            "set(CMAKE_CXX_STANDARD 17)\nadd_compile_options(-Wall -Wextra)\n"
            "add_library(geom " + " ".join(f"src/{s}.cpp" for s in shapes) + ")\n"
            "add_executable(geom_demo src/main.cpp)\ntarget_link_libraries(geom_demo geom)\n"
        ),
        "src/shape.h": """
            #pragma once
            #include <string>
            #include <vector>
            struct Point { double x; double y; };
            class Shape {
            public:
                virtual ~Shape() = default;
                virtual double area() const = 0;
                virtual std::string name() const = 0;
            };
            """,
        "src/main.cpp": """
            #include "shape.h"
            #include <iostream>
            #include <map>
            int main() {
                std::map<std::string, std::vector<Point>> outlines;
                outlines["unit"].push_back(Point{0, 0});
                std::cout << outlines.at("unit").size() << std::endl;
                std::cout << outlines["unit"] + 1 << std::endl;
                return 0;
            }
            """,
    }
    for i, shape in enumerate(shapes):
        cls = shape.capitalize()
        files[f"src/{shape}.cpp"] = f"""
            #include "shape.h"
            class {cls} : public Shape {{
            public:
                explicit {cls}(std::vector<Point> pts) : pts_(pts) {{}}
                double area() const override {{
                    double sum = 0;
                    int unused_{i} = {i};
                    for (int k = 0; k < pts_.size(); k++) sum += pts_[k].x * {i + 1};
                    return sum;
                }}
                std::string name() const override {{ return "{shape}"; }}
            private:
                std::vector<Point> pts_;
            }};
            double {shape}_area(const std::vector<Point>& pts, int precision) {{
                return {cls}(pts).area();
            }}
            """
    _write(proj, files)
    configure = run.run(["cmake", "-S", ".", "-B", "build"], proj, timeout=120)
    built = run.run(["cmake", "--build", "build"], proj, timeout=300)
    if not configure or not built:
        return []
    text = configure + built
    return [
        Capture(
            "cmake-build",
            "cmake -S . -B build && cmake --build build",
            text,
            "Configure and build the geometry library.",
            first_line(text, "error:", default="cmake output above."),
        )
    ]


# -- valgrind and AddressSanitizer ------------------------------------------------------------

LEAK_C = """
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    typedef struct { char *name; int *scores; } Player;
    static Player *load_player(const char *name, int n) {
        Player *p = malloc(sizeof *p);
        p->name = strdup(name);
        p->scores = calloc(n, sizeof(int));
        return p;
    }
    static int best(const Player *p, int n) {
        int top = 0;
        for (int i = 0; i <= n; i++) if (p->scores[i] > top) top = p->scores[i];
        return top;
    }
    int main(void) {
        const char *names[] = {"ada", "brian", "carla", "dmitri"};
        for (int i = 0; i < 4; i++) {
            Player *p = load_player(names[i], 8 + i);
            printf("%s best=%d\\n", p->name, best(p, 8 + i));
            if (i % 2 == 0) { free(p->scores); free(p); }
        }
        return 0;
    }
    """

OVERFLOW_C = """
    #include <stdio.h>
    #include <stdlib.h>
    typedef struct { int *data; size_t len; size_t cap; } Vec;
    static void vec_push(Vec *v, int x) {
        if (v->len == v->cap) { v->cap = v->cap ? v->cap * 2 : 4; v->data = realloc(v->data, v->cap * sizeof(int)); }
        v->data[v->len++] = x;
    }
    static int vec_sum_window(const Vec *v, size_t from, size_t width) {
        int s = 0;
        for (size_t i = from; i <= from + width; i++) s += v->data[i];
        return s;
    }
    int main(void) {
        Vec v = {0};
        for (int i = 0; i < 8; i++) vec_push(&v, i * 3);
        printf("window=%d\\n", vec_sum_window(&v, 4, 4));
        free(v.data);
        return 0;
    }
    """


def crash_captures(run: Runner, root: Path) -> list[Capture]:
    out: list[Capture] = []
    if not run.have("gcc"):
        return out
    proj = root / "crash"
    _write(proj, {"players.c": LEAK_C, "vec.c": OVERFLOW_C})
    if (
        run.have("valgrind")
        and run.run(["gcc", "-g", "-O0", "-o", "players", "players.c"], proj) == ""
    ):
        text = run.run(["valgrind", "--leak-check=full", "./players"], proj, timeout=120)
        if text:
            out.append(
                Capture(
                    "valgrind",
                    "gcc -g -O0 -o players players.c && valgrind --leak-check=full ./players",
                    text,
                    "Check the player loader for memory errors.",
                    first_line(text, "definitely lost", default="valgrind output above."),
                )
            )
    asan = ["gcc", "-g", "-O0", "-fsanitize=address", "-fno-omit-frame-pointer", "-o", "vec"]
    if run.run([*asan, "vec.c"], proj) == "":
        text = run.run(["./vec"], proj, env={"ASAN_OPTIONS": "detect_leaks=1"})
        if text:
            out.append(
                Capture(
                    "asan",
                    "make asan && ./vec",
                    text,
                    "Why does the vector test crash?",
                    first_line(text, "SUMMARY:", default="sanitizer output above."),
                )
            )
    return out


# -- Rust -------------------------------------------------------------------------------------

RUST_MODULES = ("accounts", "budget", "ledger", "rates", "report", "tax")


def _rust_module(name: str, rng: random.Random) -> str:
    fns = []
    for i in range(rng.randint(3, 5)):
        kind = rng.choice(("len_zero", "return", "clone", "range", "unused", "collapsible"))
        fn = f"{name}_check{i}"
        if kind == "len_zero":
            body = f"pub fn {fn}(items: &Vec<i64>) -> bool {{\n    items.len() == 0\n}}\n"
        elif kind == "return":
            body = f"pub fn {fn}(x: i64) -> i64 {{\n    return x * {i + 2};\n}}\n"
        elif kind == "clone":
            body = (
                f"pub fn {fn}(label: &String) -> usize {{\n"
                "    let copy = label.clone();\n    copy.len()\n}\n"
            )
        elif kind == "range":
            body = f"pub fn {fn}(x: i64) -> bool {{\n    x >= 10 && x <= {100 + i}\n}}\n"
        elif kind == "unused":
            body = (
                f"pub fn {fn}(rows: &[i64]) -> i64 {{\n"
                f"    let limit_{i} = {i};\n    rows.iter().sum()\n}}\n"
            )
        else:
            body = (
                f"pub fn {fn}(a: bool, b: bool) -> i32 {{\n"
                "    if a {\n        if b {\n            return 1;\n        }\n    }\n    0\n}\n"
            )
        fns.append(body)
    tests = []
    for t in range(rng.randint(4, 7)):
        want = t * 7
        got = want if rng.random() > 0.25 else want + 1
        tests.append(
            f"    #[test]\n    fn {name}_case_{t}() {{\n"
            f'        assert_eq!({got}, {want}, "{name} case {t}");\n    }}\n'
        )
    if name == "report":
        tests.append(
            "    #[test]\n    fn report_parses_header() {\n"
            "        let header: Option<&str> = \"\".split(',').nth(3);\n"
            '        let cols: usize = header.unwrap().parse().expect("column count");\n'
            "        assert!(cols > 0);\n    }\n"
        )
    return "\n".join(fns) + "\n#[cfg(test)]\nmod tests {\n" + "\n".join(tests) + "}\n"


def rust_captures(run: Runner, root: Path) -> list[Capture]:
    if not run.have("cargo"):
        return []
    rng = random.Random(29)
    proj = root / "books"
    files = {
        "Cargo.toml": '[package]\nname = "books"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
        "src/lib.rs": "".join(f"pub mod {m};\n" for m in RUST_MODULES),
    }
    for name in RUST_MODULES:
        files[f"src/{name}.rs"] = _rust_module(name, rng)
    _write(proj, files)
    env = {"CARGO_TARGET_DIR": str(run.work / "target-books"), "CARGO_TERM_COLOR": "never"}
    out: list[Capture] = []
    for key, argv, ask, needle in (
        (
            "cargo-clippy",
            ["cargo", "clippy", "--offline"],
            "Run clippy on the books crate.",
            "warning:",
        ),
        ("cargo-test", ["cargo", "test", "--offline"], "Run the books tests.", "panicked at"),
    ):
        text = run.run(argv, proj, env=env, timeout=300)
        if text:
            out.append(
                Capture(
                    key,
                    " ".join(argv[:2]),
                    text,
                    ask,
                    first_line(text, needle, default="cargo output above."),
                )
            )
    return out


# -- Go ---------------------------------------------------------------------------------------

GO_CART = """
    package cart

    import "sync"

    type Cart struct {
        mu    sync.Mutex
        items map[string]int
        hits  int
    }

    func New() *Cart { return &Cart{items: map[string]int{}} }

    func (c *Cart) Add(sku string, qty int) {
        c.mu.Lock()
        c.items[sku] += qty
        c.mu.Unlock()
        c.hits++
    }

    func (c *Cart) Total(prices map[string]int) int {
        sum := 0
        for sku, qty := range c.items {
            sum += prices[sku] * qty
        }
        if sum > 10000 {
            sum = sum * 95 / 100
        }
        return sum
    }
    """


def _go_test(rng: random.Random) -> str:
    cases = []
    for i in range(rng.randint(14, 20)):
        qty = rng.randint(1, 9)
        price = rng.randint(100, 900)
        want = qty * price if rng.random() > 0.15 else qty * price + 5
        cases.append(f'        {{"sku{i}", {qty}, {price}, {want}}},')
    return (
        'package cart\n\nimport (\n    "fmt"\n    "sync"\n    "testing"\n)\n\n'
        "func TestTotal(t *testing.T) {\n"
        "    cases := []struct {\n        sku   string\n        qty   int\n        price int\n        want  int\n    }{\n"
        + "\n".join(cases)
        + "\n    }\n    for i, tc := range cases {\n"
        '        t.Run(fmt.Sprintf("case_%d", i), func(t *testing.T) {\n'
        "            c := New()\n            c.Add(tc.sku, tc.qty)\n"
        "            if got := c.Total(map[string]int{tc.sku: tc.price}); got != tc.want {\n"
        '                t.Errorf("Total(%s x%d) = %d, want %d", tc.sku, tc.qty, got, tc.want)\n'
        "            }\n        })\n    }\n}\n\n"
        "func TestConcurrentAdd(t *testing.T) {\n    c := New()\n    var wg sync.WaitGroup\n"
        "    for i := 0; i < 4; i++ {\n        wg.Add(1)\n"
        '        go func() { defer wg.Done(); c.Add("apple", 1) }()\n    }\n    wg.Wait()\n'
        '    t.Logf("hits=%d", c.hits)\n}\n'
    )


def go_captures(run: Runner, root: Path) -> list[Capture]:
    if not (run.have("go") and run.have("gcc")):
        return []
    proj = root / "gocart"
    _write(proj, {"go.mod": "module example.com/gocart\n\ngo 1.21\n", "cart/cart.go": GO_CART})
    (proj / "cart" / "cart_test.go").write_text(_go_test(random.Random(31)), encoding="utf-8")
    env = go_env(run.work, CGO_ENABLED="1")
    text = run.run(["go", "test", "-race", "-v", "-count=1", "./..."], proj, env=env, timeout=300)
    if not text:
        return []
    return [
        Capture(
            "go-test-race",
            "go test -race -v ./...",
            text,
            "Run the cart tests with the race detector.",
            first_line(text, "WARNING: DATA RACE", "--- FAIL", default="go test output above."),
        )
    ]


# -- Java -------------------------------------------------------------------------------------

JAVA_BROKEN = {
    "src/shop/Order.java": """
        package shop;
        import java.util.List;
        public class Order {
            private final List<LineItem> items;
            public Order(List<LineItem> items) { this.items = items; }
            public long total() {
                long sum = 0;
                for (LineItem item : items) sum += item.price() * item.qty();
                return sum;
            }
            public String currency() { return curency; }
        }
        """,
    "src/shop/LineItem.java": """
        package shop;
        public record LineItem(String sku, long price, int qty) {}
        """,
    "src/shop/Invoice.java": """
        package shop;
        import java.util.Map;
        public class Invoice {
            public int lines(Map<String, Order> orders) {
                String count = orders.size();
                return orders.values().stream().mapToInt(Order::lineCount).sum();
            }
        }
        """,
}

JAVA_CRASH = {
    "src/app/Main.java": """
        package app;
        import java.util.List;
        public class Main {
            static int parseQty(String raw) {
                try {
                    return Integer.parseInt(raw.trim());
                } catch (NumberFormatException e) {
                    throw new IllegalStateException("bad quantity in row: " + raw, e);
                }
            }
            static int load(List<String> rows) {
                int total = 0;
                for (String row : rows) total += parseQty(row.split(",")[1]);
                return total;
            }
            public static void main(String[] args) {
                System.out.println("loaded " + load(List.of("a,1", "b,2", "c,x3")));
            }
        }
        """,
}


def java_captures(run: Runner, root: Path) -> list[Capture]:
    if not (run.have("javac") and run.have("java")):
        return []
    out: list[Capture] = []
    broken = root / "jshop"
    _write(broken, JAVA_BROKEN)
    argv = ["javac", "-d", "out", *sorted(JAVA_BROKEN)]
    text = run.run(argv, broken, timeout=120)
    if text:
        out.append(
            Capture(
                "javac",
                "javac -d out src/shop/*.java",
                text,
                "Compile the shop sources.",
                first_line(text, "error:", default="javac output above."),
            )
        )
    crash = root / "japp"
    _write(crash, JAVA_CRASH)
    if run.run(["javac", "-d", "out", *JAVA_CRASH], crash, timeout=120) == "":
        text = run.run(["java", "-cp", "out", "app.Main"], crash, timeout=120)
        if text:
            out.append(
                Capture(
                    "java-exception",
                    "java -cp out app.Main",
                    text,
                    "Run the importer.",
                    first_line(text, "Exception", default="java output above."),
                )
            )
    return out


# -- Java with Maven ---------------------------------------------------------------------------

#: exact plugin and library versions (Maven Central): the same build on every machine
MAVEN_VERSIONS = {
    "junit": "5.14.1",
    "resources": "3.3.1",
    "compiler": "3.13.0",
    "surefire": "3.5.2",
}

MAVEN_CLASSES = ("Cart", "Coupon", "Inventory", "Ledger", "Pricing", "Refund", "Shipping", "Tax")


def _maven_pom(name: str) -> str:
    v = MAVEN_VERSIONS
    plugin = (
        "<plugin><groupId>org.apache.maven.plugins</groupId>"
        "<artifactId>maven-{0}-plugin</artifactId><version>{1}</version>{2}</plugin>"
    )
    lint = "<configuration><compilerArgs><arg>-Xlint:all</arg></compilerArgs></configuration>"
    plugins = "\n            ".join(
        (
            plugin.format("resources", v["resources"], ""),
            plugin.format("compiler", v["compiler"], lint),
            plugin.format("surefire", v["surefire"], ""),
        )
    )
    return f"""
        <?xml version="1.0" encoding="UTF-8"?>
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <groupId>example.shop</groupId>
          <artifactId>{name}</artifactId>
          <version>1.4.0</version>
          <packaging>jar</packaging>
          <properties>
            <maven.compiler.release>17</maven.compiler.release>
            <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
          </properties>
          <dependencies>
            <dependency>
              <groupId>org.junit.jupiter</groupId>
              <artifactId>junit-jupiter</artifactId>
              <version>{v["junit"]}</version>
              <scope>test</scope>
            </dependency>
          </dependencies>
          <build><plugins>
        {plugins}
          </plugins></build>
        </project>
        """


def _maven_class(name: str, rng: random.Random, off_by_one: bool) -> str:
    rate = rng.randint(3, 19)
    bump = " + (amounts.size() > 3 ? 1 : 0)" if off_by_one else ""
    raw = "    public List rawAmounts() { return amounts; }\n" if rng.random() < 0.6 else ""
    return f"""
        package shop;
        import java.util.ArrayList;
        import java.util.List;
        public class {name} {{
            private final List<Integer> amounts = new ArrayList<>();
            public void add(int cents) {{ amounts.add(cents); }}
            public int total() {{
                int sum = 0;
                for (int a : amounts) sum += a;
                return sum{bump};
            }}
            public int withRate() {{ return total() * {rate} / 100; }}
            @Deprecated public int legacyTotal() {{ return total(); }}
            public int count() {{ return amounts.size(); }}
        {raw}}}
        """


def _maven_test(name: str, rng: random.Random) -> str:
    cases = []
    for k in range(rng.randint(4, 9)):
        cents = [rng.randint(1, 900) for _ in range(rng.randint(1, 4))]
        adds = " ".join(f"c.add({c});" for c in cents)
        cases.append(
            f"    @Test void total{k}() {{ {name} c = new {name}(); {adds} "
            f"assertEquals({sum(cents)}, c.total()); }}"
        )
    cases.append(
        f"    @Test void legacy() {{ {name} c = new {name}(); c.add(5); "
        "assertEquals(c.total(), c.legacyTotal()); }"
    )
    body = "\n".join(cases)
    return (
        "package shop;\nimport static org.junit.jupiter.api.Assertions.*;\n"
        f"import org.junit.jupiter.api.Test;\nclass {name}Test {{\n{body}\n}}\n"
    )


def maven_captures(run: Runner, root: Path) -> list[Capture]:
    """``mvn -B test`` of a shop with one broken class (surefire failures, -Xlint warnings),
    and ``mvn -B compile`` of a module that does not compile; skipped without Maven or
    when Maven Central cannot be reached."""
    if not (run.have("mvn") and run.have("javac")):
        return []
    rng = random.Random(53)
    shop = root / "mvnshop"
    files = {"pom.xml": _maven_pom("shop")}
    for name in MAVEN_CLASSES:
        files[f"src/main/java/shop/{name}.java"] = _maven_class(name, rng, name == "Refund")
        files[f"src/test/java/shop/{name}Test.java"] = _maven_test(name, rng)
    _write(shop, files)
    env = {"MAVEN_OPTS": "-Djava.awt.headless=true"}
    # a first, quiet run fetches the plugins (surefire and its JUnit provider too: its tests
    # fail, as they should), so that the captured run prints no download lines
    if run.run(["mvn", "-B", "-q", "test"], shop, env=env, timeout=600) is None:
        return []
    if not (shop / "target" / "test-classes").is_dir():
        run.skipped.append("mvn: could not build (no Maven Central?)")
        return []
    shutil.rmtree(shop / "target")  # the captured run compiles (and warns) again
    broken = root / "mvnbilling"
    bad = {"pom.xml": _maven_pom("billing")}
    for name in ("Order", "LineItem", "Invoice"):
        bad[f"src/main/java/shop/{name}.java"] = JAVA_BROKEN[f"src/shop/{name}.java"]
    _write(broken, bad)
    out: list[Capture] = []
    for key, goal, cwd, ask, needles in (
        ("maven-test", "test", shop, "Run the shop's unit tests.", ("<<< FAILURE!",)),
        ("maven-compile", "compile", broken, "Build the billing module.", ("COMPILATION ERROR",)),
    ):
        text = run.run(["mvn", "-B", goal], cwd, env=env, timeout=300)
        if text:
            answer = first_line(text, *needles, "[ERROR]", default="mvn output above.")
            out.append(Capture(key, f"mvn -B {goal}", text, ask, answer))
    return out


# -- Node -------------------------------------------------------------------------------------


def _node_tests(rng: random.Random) -> str:
    lines = [
        "const test = require('node:test');",
        "const assert = require('node:assert');",
        "const { slug, price } = require('../lib.js');",
    ]
    for i in range(rng.randint(16, 24)):
        if rng.random() < 0.2:
            lines.append(
                f"test('slug keeps case {i}', () => {{ assert.strictEqual(slug('Item {i}'), 'Item-{i}'); }});"
            )
        else:
            lines.append(
                f"test('price of {i} units', () => {{ assert.strictEqual(price({i}), {i * 250}); }});"
            )
    return "\n".join(lines) + "\n"


def node_captures(run: Runner, root: Path) -> list[Capture]:
    if not run.have("node"):
        return []
    proj = root / "nodeshop"
    _write(
        proj,
        {
            "lib.js": """
                exports.slug = (s) => s.toLowerCase().replace(/\\s+/g, '-');
                exports.price = (n) => n * 250;
                """,
            "test/shop.test.js": _node_tests(random.Random(37)),
        },
    )
    text = run.run(["node", "--test", "--test-reporter=spec", "test/"], proj, timeout=120)
    if not text:
        return []
    return [
        Capture(
            "node-test",
            "node --test test/",
            text,
            "Run the shop tests.",
            first_line(text, "AssertionError", "✖", default="node output above."),
        )
    ]


# -- npm: TypeScript, eslint, vitest ------------------------------------------------------

#: exact versions: the same install on every machine (npm resolves nothing else)
NPM_TOOLS = {"typescript": "7.0.2", "eslint": "10.15.0", "@eslint/js": "10.0.1", "vitest": "4.1.12"}

_TS_FIELDS = (("id", "number"), ("sku", "string"), ("qty", "number"), ("note", "string"))


#: per kind of function, its TypeScript (the type error ``tsc --strict`` reports in it)
_TS_BODIES = {
    "assign": "export function {fn}(x: {cap}): string {{\n  const n: string = x.qty;\n  return n;\n}}",
    "arg": (
        "function scale{i}(v: number): number {{\n  return v * {k};\n}}\n"
        "export function {fn}(x: {cap}): number {{\n  return scale{i}(x.sku);\n}}"
    ),
    "missing": 'export function {fn}(): {cap} {{\n  return {{ id: {i}, sku: "S-{i}", qty: 1 }};\n}}',
    "undefined": (
        "export function {fn}(items: {cap}[]): number {{\n"
        "  const first = items.find((it) => it.id === {i});\n  return first.qty;\n}}"
    ),
    "clean": "export function {fn}(x: {cap}): number {{\n  return x.qty + {i};\n}}",
}
#: ... and its JavaScript (what eslint's rules below report in it)
_JS_BODIES = {
    "var": (
        "export function {fn}(items) {{\n  var total = 0;\n"
        "  for (const it of items) total += it.qty;\n  return total;\n}}"
    ),
    "eqeq": "export function {fn}(a, b) {{\n  return a.status == b.status;\n}}",
    "unused": (
        "export function {fn}(order, options) {{\n  const spare{i} = order.id;\n"
        "  return order.total;\n}}"
    ),
    "undef": "export function {fn}(order) {{\n  return lookupRate{i}(order.region) * order.total;\n}}",
    "clean": "export function {fn}(x) {{\n  return x * {k};\n}}",
}


def _functions(
    head: list[str], bodies: dict[str, str], rng: random.Random, most: int, **names: str
) -> str:
    """``head``, then 3 to ``most`` functions of kinds drawn from ``bodies``."""
    lines = list(head)
    for i in range(rng.randint(3, most)):
        body = bodies[rng.choice(tuple(bodies))]
        lines += [body.format(fn=f"{names['prefix']}{i}", i=i, k=i + 2, **names), ""]
    return "\n".join(lines)


def _ts_module(name: str, rng: random.Random) -> str:
    """A TypeScript module with the type errors ``tsc --strict`` reports."""
    cap = name.capitalize()
    head = [f"export interface {cap} {{", *(f"  {f}: {kind};" for f, kind in _TS_FIELDS), "}", ""]
    return _functions(head, _TS_BODIES, rng, 5, cap=cap, prefix=f"{name}Step")


def _js_module(name: str, rng: random.Random) -> str:
    """A JavaScript module with what eslint's rules below report."""
    head = [f"// {name}: helpers of the web shop", ""]
    return _functions(head, _JS_BODIES, rng, 6, prefix=f"{name}_")


def _vitest_file(name: str, rng: random.Random) -> str:
    lines = [
        'import { describe, it, expect } from "vitest";',
        'import { price, slug, merge } from "../shop.js";',
        "",
    ]
    lines.append(f'describe("{name}", () => {{')
    for i in range(rng.randint(6, 10)):
        if i % 8 == 3:  # about one failing test in six
            lines.append(
                f'  it("merges settings {i}", () => {{\n    expect(merge({{ a: {{ x: {i} }} }}, {{ a: {{ y: 2 }} }})).toEqual({{ a: {{ x: {i}, y: 3 }} }});\n  }});'
            )
        elif i % 8 == 6:
            lines.append(
                f'  it("slug of item {i}", () => {{\n    expect(slug("Item {i}")).toBe("Item-{i}");\n  }});'
            )
        else:
            lines.append(
                f'  it("price of {i} units", () => {{\n    expect(price({i})).toBe({i * 250});\n  }});'
            )
    lines.append("});")
    return "\n".join(lines) + "\n"


_ESLINT_CONFIG = """
    import js from "@eslint/js";

    export default [
      js.configs.recommended,
      {
        files: ["lib/**/*.js"],
        languageOptions: { ecmaVersion: 2022, sourceType: "module" },
        rules: { "no-unused-vars": "warn", eqeqeq: "error", "no-undef": "error", "no-var": "error" },
      },
    ];
    """


def npm_captures(run: Runner, root: Path) -> list[Capture]:
    if not (run.have("node") and run.have("npm")):
        return []
    rng = random.Random(41)
    proj = root / "webshop"
    files = {
        "package.json": json.dumps(
            {
                "name": "webshop",
                "version": "1.0.0",
                "private": True,
                "type": "module",
                "devDependencies": NPM_TOOLS,
            },
            indent=2,
        ),
        "tsconfig.json": json.dumps(
            {
                "compilerOptions": {
                    "target": "ES2020",
                    "module": "commonjs",
                    "strict": True,
                    "noEmit": True,
                },
                "include": ["src"],
            },
            indent=2,
        ),
        "eslint.config.js": _ESLINT_CONFIG,
        "shop.js": """
            export const price = (n) => n * 250;
            export const slug = (s) => s.toLowerCase().replace(/\\s+/g, "-");
            export const merge = (a, b) => ({ ...a, ...b });
            """,
    }
    for name in ("orders", "stock", "billing", "users"):
        files[f"src/{name}.ts"] = _ts_module(name, rng)
    for name in ("cart", "rates", "report", "session", "audit"):
        files[f"lib/{name}.js"] = _js_module(name, rng)
    for name in ("pricing", "slugs", "settings", "checkout"):
        files[f"test/{name}.test.js"] = _vitest_file(name, rng)
    _write(proj, files)
    cache = {"npm_config_cache": str(run.work / "npm-cache"), "npm_config_update_notifier": "false"}
    installed = run.run(
        ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
        proj,
        env=cache,
        timeout=300,
    )
    bin_dir = proj / "node_modules" / ".bin"
    if installed is None or not (bin_dir / "tsc").exists():
        run.skipped.append("npm install: failed (no registry?)")
        return []
    colour = {**cache, "FORCE_COLOR": "1"}
    out: list[Capture] = []
    wanted = (
        (
            "tsc-pretty",
            ["tsc", "--noEmit", "--pretty"],
            colour,
            "npx tsc --noEmit --pretty",
            "Type-check the shop.",
            "TS2",
        ),
        ("eslint", ["eslint", "lib/"], cache, "npx eslint lib/", "Lint the helpers.", "error"),
        ("vitest", ["vitest", "run"], cache, "npx vitest run", "Run the shop tests.", "FAIL"),
    )
    for key, argv, env, command, ask, needle in wanted:
        text = run.run([str(bin_dir / argv[0]), *argv[1:]], proj, env=env, timeout=180)
        if text:
            answer = strip_ansi(first_line(text, needle, default="output above."))
            out.append(Capture(key, command, text, ask, answer))
    return out


def toolchain_captures(run: Runner, root: Path) -> list[Capture]:
    """Every toolchain capture whose programs are on the PATH."""
    root.mkdir(parents=True, exist_ok=True)
    found: list[Capture] = []
    for make in (
        make_captures,
        cmake_captures,
        crash_captures,
        rust_captures,
        go_captures,
        java_captures,
        maven_captures,
        node_captures,
        npm_captures,
    ):
        found += make(run, root)
    return found
