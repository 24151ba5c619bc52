"""g++'s candidate notes after an include chain (``In file included from``) left the error's
block: each note stays, the code and carets under it are snippet art and go to the stash."""

from __future__ import annotations

from workers.engines.toolfilter.blocks import SNIPPET, analyse

# g++ 12, ``std::vector<Point> + 1`` (as ``cmake --build`` prints it)
GXX = """\
/home/dev/geom/src/main.cpp: In function 'int main()':
/home/dev/geom/src/main.cpp:8:35: error: no match for 'operator+' (operand types are 'std::vector<Point>' and 'int')
    8 |     std::cout << outlines["unit"] + 1 << std::endl;
In file included from /usr/include/c++/12/string:47,
                 from /home/dev/geom/src/shape.h:2,
                 from /home/dev/geom/src/main.cpp:1:
/usr/include/c++/12/bits/stl_iterator.h:630:5: note: candidate: 'template<class _Iterator> constexpr std::reverse_iterator<_Iterator> std::operator+(typename reverse_iterator<_Iterator>::difference_type, const reverse_iterator<_Iterator>&)'
  630 |     operator+(typename reverse_iterator<_Iterator>::difference_type __n,
      |     ^~~~~~~~
/usr/include/c++/12/bits/stl_iterator.h:630:5: note:   template argument deduction/substitution failed:
/home/dev/geom/src/main.cpp:8:37: note:   mismatched types 'const std::reverse_iterator<_Iterator>' and 'int'
    8 |     std::cout << outlines["unit"] + 1 << std::endl;
      |                                     ^
gmake[2]: *** [CMakeFiles/geom_demo.dir/build.make:76: CMakeFiles/geom_demo.dir/src/main.cpp.o] Error 1
"""


def test_code_under_a_note_outside_its_block_is_snippet_art() -> None:
    lines = GXX.split("\n")
    structure = analyse(lines)
    dropped = {lines[i] for i, label in structure.drop.items() if label == SNIPPET}
    assert (
        "  630 |     operator+(typename reverse_iterator<_Iterator>::difference_type __n,"
        in dropped
    )
    assert "      |                                     ^" in dropped
    for i, line in enumerate(lines):
        if ": note: " in line or line.startswith(("In file included", "                 from")):
            assert i not in structure.drop, line


# gcc -Wall -Wextra on one file: two kinds of warning, each repeated
REPEATS = """\
src/deque.c: In function 'deque_op1':
src/deque.c:14:9: warning: unused variable 'scratch1' [-Wunused-variable]
   14 |     int scratch1;
      |         ^~~~~~~~
src/deque.c: In function 'deque_op2':
src/deque.c:21:9: warning: unused variable 'scratch2' [-Wunused-variable]
   21 |     int scratch2;
      |         ^~~~~~~~
src/deque.c: In function 'deque_op3':
src/deque.c:28:9: warning: unused variable 'scratch3' [-Wunused-variable]
   28 |     int scratch3;
      |         ^~~~~~~~
src/deque.c: In function 'deque_op4':
src/deque.c:35:23: warning: comparison of integer expressions of different signedness: 'int' and 'size_t' [-Wsign-compare]
   35 |     for (int k = 0; k < strlen(text); k++) if (text[k] == ',') hits++;
      |                       ^
src/deque.c: In function 'deque_op5':
src/deque.c:41:23: warning: comparison of integer expressions of different signedness: 'int' and 'size_t' [-Wsign-compare]
   41 |     for (int k = 0; k < strlen(text); k++) if (text[k] == ',') hits++;
      |                       ^
"""


def test_a_repeat_lists_the_names_its_headline_quotes_that_the_first_did_not() -> None:
    structure = analyse(REPEATS.split("\n"), lambda i: False)
    wheres = sorted(r.where for r in structure.repeats.values())
    assert wheres == [
        "src/deque.c:21:9 'scratch2'",
        "src/deque.c:28:9 'scratch3'",
        "src/deque.c:41:23",  # the same types as the shown one: nothing to add
    ]
