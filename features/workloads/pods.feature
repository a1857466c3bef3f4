Feature: Pods that change during a scenario
  Pods become ready late, turn unready, fail or disappear while the HPA
  watches. New pods of a scale-up that are not yet ready, or whose cpu sample
  started before they became ready, count as zero on a scale-up; a deleted
  pod's metrics go with it.

  Scenario: New pods count only once they have been ready for a full metric window
    # new pods are Ready 30s after they start; a 30s cpu sample only counts
    # once it began after that: at 60s.
    Given a deployment "web" with 2 pods
    And new pods of "web" become ready after 30s
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m and 700m
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    # every pod at 60%: with web-2 and web-3 counted as 0 the ratio is 0.6,
    # the opposite direction, so nothing changes until they count.
    When the pods report:
      | pod   | cpu  | timestamp | window |
      | web-0 | 600m | 0s        | 30s    |
      | web-1 | 600m | 0s        | 30s    |
      | web-2 | 600m | 0s        | 30s    |
      | web-3 | 600m | 0s        | 30s    |
    Then the deployment "web" stays at 4 replicas for 45s
    When 15s pass
    Then the deployment "web" has 5 replicas
    And the HPA "web" reports cpu utilization 60%

  @simulated-workloads
  Scenario: Only ready pods count for an object value target, as they change
    # 200 against 100: ratio 2 times the ready pods.
    Given a deployment "web" with 3 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "requests_per_second" of Deployment "web" with value 100
    And object metric "requests_per_second" of Deployment "web" is 200
    When pod "web-2" becomes unready
    And the HPA controller syncs
    Then the deployment "web" has 4 replicas
    When pod "web-2" becomes ready
    And pod "web-1" fails
    And 15s pass
    Then the deployment "web" has 6 replicas

  @simulated-workloads
  Scenario: A deleted pod's metrics go with it
    # with web-2 at 400 the average would be 200 (ratio 2); without it, 100.
    Given a deployment "web" with 3 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    And the pods of "web" report "http_requests" of 100, 100 and 400
    When pod "web-2" is deleted
    And the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" reports "http_requests" at 100
    And the HPA "web" has condition "AbleToScale" "True" with reason "ReadyForNewScale"

  Scenario: A pod that started just now and is ready now
    # web-1 started now: within the initialization period, Ready since now,
    # and its 30s sample ends now, so it began before the pod was ready.
    Given a deployment "web" with pods:
      | pod   | started | ready since |
      | web-0 | 10m     | 10m         |
      | web-1 | now     | now         |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods report:
      | pod   | cpu  | timestamp | window |
      | web-0 | 900m | 0s        | 30s    |
      | web-1 | 900m | 0s        | 30s    |
    When the HPA controller syncs
    # web-0 alone: 90%, ratio 1.8; web-1 counts as 0: 45%, ratio 0.9, the
    # opposite direction: no change.
    Then the deployment "web" is not rescaled
    And the HPA "web" reports cpu utilization 90%

  @simulated-workloads
  Scenario: A pod table said after "the new pods of ... report" wins for the pods it names
    # The scale-up's new pods report 0 by the rule; the table, said later
    # and naming them, gives consumer-1 188m: 376m over 3 pods, 125m against
    # 250m, ratio 0.5, 2 replicas once the scale-up's recommendation of 3
    # leaves the 5m scale-down window. (Upstream's e2e behaviour tests give
    # values so, in test/e2e/autoscaling/horizontal_pod_autoscaling_behavior.go.)
    Given a deployment "consumer" with 1 pod
    And an HPA "consumer" for deployment "consumer" with min 1 and max 5 replicas
    And the HPA "consumer" scales on cpu average value 250m
    And the new pods of "consumer" report "cpu" of 0
    And the pods of "consumer" report "cpu" of 750m
    When the HPA controller syncs
    Then the deployment "consumer" has 3 replicas
    When the pods report:
      | pod        | cpu  | timestamp | window |
      | consumer-0 | 188m | 0s        | 0s     |
      | consumer-1 | 188m | 0s        | 0s     |
      | consumer-2 | 0    | 0s        | 0s     |
    And 5m15s pass
    Then the deployment "consumer" has 2 replicas
    And the HPA "consumer" reports "cpu" at 125m

  @simulated-workloads
  Scenario: A pod table without sample times said after "the new pods of ... report" wins too
    Given a deployment "consumer" with 1 pod
    And an HPA "consumer" for deployment "consumer" with min 1 and max 5 replicas
    And the HPA "consumer" scales on cpu average value 250m
    And the new pods of "consumer" report "cpu" of 0
    And the pods of "consumer" report "cpu" of 750m
    When the HPA controller syncs
    Then the deployment "consumer" has 3 replicas
    When the pods report:
      | pod        | cpu  |
      | consumer-0 | 188m |
      | consumer-1 | 188m |
      | consumer-2 | 0    |
    And 5m15s pass
    Then the deployment "consumer" has 2 replicas
    And the HPA "consumer" reports "cpu" at 125m
