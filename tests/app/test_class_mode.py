"""Class mode: presenter mode travels with a link and stays in the address; presenter mode keeps a page menu;
story links open in the same tab and carry presenter mode (ui.common.class_mode, ui.common.presets.html_links)."""

from __future__ import annotations

from conftest import new_app  # the harness: tests/conftest.py


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_a_presenter_link_turns_presenter_mode_on_and_home_stories_carry_it():
    at = new_app(query={"presenter": "1"}).run()
    assert not at.exception
    assert at.session_state["presenter"] is True
    text = _markdown(at)
    assert 'target="_self"' in text and "presenter=1" in text  # stories: same tab, presenter mode kept
    assert "_blank" not in text


def test_without_the_link_parameter_stories_do_not_force_presenter_mode():
    at = new_app().run()
    assert not at.exception
    assert not at.session_state["presenter"]
    text = _markdown(at)
    assert 'target="_self"' in text and "presenter=1" not in text


def test_presenter_mode_stays_in_the_address_and_keeps_a_page_menu_on_nvdp():
    at = new_app("nvdp", timeout=240, query={"presenter": "1"}).run()
    assert not at.exception
    assert at.query_params.get("presenter") in ("1", ["1"])  # the page's URL writer keeps it
    labels = [p.label for p in at.get("page_link")]
    assert {"Home", "PMT regression", "NVDP embeddings", "Learn (class plan)"} <= set(labels), labels
    at.toggle(key="presenter").set_value(False).run()
    assert "presenter" not in at.query_params
    assert not at.get("page_link")  # the sidebar is back: no extra menu


def test_the_class_plan_fills_fifty_minutes_with_every_lesson_and_story_linked():
    from ui.common.class_mode import CLASS_PLAN, plan_html, plan_minutes
    from ui.common.presets import PRESETS

    assert plan_minutes() == 50
    assert sorted(w for _, k, w in CLASS_PLAN if k == "lesson") == [1, 2, 3, 4, 5]
    assert {w for _, k, w in CLASS_PLAN if k == "story"} == {p.key for p in PRESETS}
    text = plan_html(["a", "b", "c", "d", "e"], presenter=True)
    assert text.count('target="_self"') == len(CLASS_PLAN) and text.count("presenter=1") == len(CLASS_PLAN)
    assert text.splitlines()[-1].startswith("- 48-50 min")


def test_a_lesson_link_opens_that_lesson_in_presenter_mode():
    at = new_app("learn", timeout=240, query={"lesson": "4", "presenter": "1"}).run()
    assert not at.exception
    assert at.session_state["learn_tab"].startswith("4 ·") and at.session_state["presenter"]
    assert any(e.label.startswith("Class plan: 50 minutes") for e in at.expander)
    assert "Learn (class plan)" in [p.label for p in at.get("page_link")]


def test_a_story_link_states_its_point_until_a_setting_changes():
    from ui.common.presets import PRESETS

    story = next(p for p in PRESETS if p.key == "epsilon_cost")
    at = new_app("pmt", timeout=240, query={**story.params, "story": story.key}, seeds=3).run()
    assert not at.exception
    assert any(story.point in i.value for i in at.info), [i.value for i in at.info]
    assert at.query_params.get("story") in (story.key, [story.key])
    at.session_state["epsilon"] = 1.0
    at.run()
    assert not any(story.point in i.value for i in at.info)  # another view: the point is no longer claimed
    assert "story" not in at.query_params
