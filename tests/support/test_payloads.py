"""The payload builders keep the shapes GitLab sends (`testkit.payloads`)."""

from __future__ import annotations

from testkit import payloads


def test_the_legacy_push_has_no_object_kind_and_no_file_lists() -> None:
    body = payloads.system_hook_push()
    assert "object_kind" not in body
    assert "id" not in body["project"]
    assert all("added" not in commit for commit in body["commits"])


def test_a_push_keeps_the_newest_twenty_commits_and_counts_all() -> None:
    commits = [
        payloads.HookCommit(sha=f"{i:040x}", message=f"c{i}", timestamp="t", author_name="a", author_email="e")
        for i in range(25)
    ]
    body = payloads.push_body(
        payloads.DIASPORA,
        payloads.JSMITH,
        before="a" * 40,
        after=commits[-1].sha,
        ref="refs/heads/master",
        commits=commits,
    )
    assert [c["id"] for c in body["commits"]] == [c.sha for c in commits[5:]]
    assert body["total_commits_count"] == 25


def test_a_branch_delete_has_a_null_checkout_sha_and_no_commits() -> None:
    body = payloads.push_branch_delete()
    assert (body["after"], body["checkout_sha"], body["commits"]) == (payloads.ZERO_SHA, None, [])


def test_a_tag_push_is_its_own_kind() -> None:
    body = payloads.system_hook_tag_push()
    assert (body["object_kind"], body["event_name"]) == ("tag_push", "tag_push")


def test_repository_update_lists_the_refs_of_its_changes_and_has_no_object_kind() -> None:
    body = payloads.system_hook_repository_update()
    assert body["refs"] == [change["ref"] for change in body["changes"]]
    assert "object_kind" not in body


def test_only_moves_carry_the_old_path() -> None:
    assert payloads.system_hook_project_rename()["old_path_with_namespace"] == "jsmith/overscore"
    assert "old_path_with_namespace" not in payloads.system_hook_project_update()
