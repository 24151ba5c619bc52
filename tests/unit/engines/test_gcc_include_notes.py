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
