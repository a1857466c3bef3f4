Feature: The fake node honours the pod-lifecycle steps on a real cluster
  Run by tests/fake_node_real.rs against `hpa-harness sim --without-node
  --generated-pod-names --pod-creation-delay 500ms` on its wall clock,
  treated as a real cluster: an API server whose controllers create the
  pods, with no node, scheduler or kubelet of its own. The harness's fake
  node schedules and runs the pods: new pods become ready after a delay,
  stay pending without room, and a chart's pods land on it too.

  Scenario: A chart's two-container pod reports its memory and the HPA scales
    Given the manifests in "cache-chart.yaml"
    And the pods report:
      | pod     | memory                       |
      | cache-0 | server=400Mi, exporter=112Mi |
    When the HPA controller syncs
    # 512Mi over the pod's 320Mi of requests: 160% of the 100% target.
    Then the deployment "cache" has 2 replicas
    And the HPA "cache" reports memory utilization 160%

  Scenario: New pods that find no room stay pending and count as 0 on a scale-up
    Given a deployment "web" with 2 pods
    And new pods of "web" stay pending
    And the pods of "web" report "cpu" of 800m and 800m
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    # 80% of a 1-cpu request: ratio 1.6, ceil(1.6 * 2) = 4.
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And 2 pods of "web" are pending
    # The pending pods count as 0: 1600m over 4 pods is 40%, ratio 0.8,
    # the other direction: no change.
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports cpu utilization 80%

  Scenario: Room for some: new pods start until 3 run, the others wait
    Given a deployment "web" with 2 pods
    And new pods of "web" stay pending until 3 are running
    And the pods of "web" report "cpu" of 800m and 800m
    And the new pods of "web" report "cpu" of 800m
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    When the HPA controller syncs
    # web-2 starts, web-3 waits.
    Then the deployment "web" has 4 replicas
    And 1 pod of "web" is pending

  Scenario: A rollout's new pods are unready until their delay passes, and cpu sets them aside
    # 2160m over 4 pods: 54% of a 1-cpu request, ratio 1.08.
    Given a deployment "web" with 4 pods
    And the pods of "web" report "cpu" of 540m, 540m, 540m and 540m
    And the new pods of "web" report "cpu" of 900m
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    When the deployment "web" rolls out a new version and new pods become ready after 1m
    # Surge 1 and 1 unavailable: an old pod goes, two new ones come unready
    # and stay so, and the rollout waits for them.
    Then the deployment "web" has 3 old and 2 new pods
    When the HPA controller syncs
    # The 3 ready pods: 54%, ratio 1.08; the unready new ones (at 90%)
    # count as 0 on a scale-up: 1620m over 5 pods, ratio 0.648, the other
    # direction: no change. Ready, they would ask for 8.
    Then the deployment "web" is not rescaled
    And the HPA "web" reports cpu utilization 54%

  Scenario: A rollout goes on as its new pods become ready after a short delay
    Given a deployment "web" with 2 pods
    When the deployment "web" rolls out a new version and new pods become ready after 5s
    Then the deployment "web" has 2 old and 1 new pod
    When 15s pass
    Then the deployment "web" has 0 old and 2 new pods

  Scenario: A pod that fails stays failed on the fake node, and is left out
    Given a deployment "web" with 3 pods
    And pod "web-2" fails
    And the pods of "web" report "http_requests" of 100, 100 and 400
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    When the HPA controller syncs
    # Without web-2: 200 over 2 pods, at the target (with it, 600 over 3
    # would ask for 6).
    Then the deployment "web" is not rescaled
    And the HPA "web" reports "http_requests" at 100
