Feature: Rolling updates under an HPA
  A rollout changes which pods the HPA averages over while the load stays
  the same: the Deployment surges new pods (maxSurge, 25% of 4 rounded up:
  1) and removes old ones as the new become Ready (maxUnavailable, 25% of 4
  rounded down: 1). New pods get no requests until they are Ready (no
  endpoint yet), so the requests the old pods served stay with the old pods
  that remain. Upstream sets unready pods aside only for cpu; a pods metric
  averages over every pod that reports, surge pods included
  (kubernetes#138505).

  @simulated-workloads
  Scenario: Unready surge pods scale a pods metric up although the load did not change
    # 432 requests/s over 4 pods: 108 each against 100, ratio 1.08, within
    # the 10% tolerance.
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    And the pods of "web" report "http_requests" of 108, 108, 108 and 108
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    Given the new pods of "web" report "http_requests" of 0
    When the deployment "web" rolls out a new version and new pods become ready after 30s
    # web-3 goes (3 stay available), web-4 and web-5 come unready: 5 pods,
    # the 432 requests/s now on web-0..web-2.
    Then the deployment "web" has 3 old and 2 new pods
    When the pods report:
      | pod   | http_requests |
      | web-0 | 144           |
      | web-1 | 144           |
      | web-2 | 144           |
    And 15s pass
    # 432 over the 5 pods that report: 86.4, ratio 0.864, outside the
    # tolerance. No pod is missing, so upstream takes its quick path,
    # ceil(0.864 * 5 pods) = ceil(4.32) = 5, with no check of direction: a
    # below-target average scales 4 up to 5, "above target".
    Then the deployment "web" has 5 replicas
    And the HPA "web" reports "http_requests" at 86400m
    And an event "SuccessfulRescale" with message "New size: 5; reason: pods metric http_requests above target" is recorded for the HPA "web"
    # The Deployment shares the new size among its ReplicaSets: 5 + 2 surge
    # = 7 pods allowed, round(3 * 7/5) = 4 old and round(2 * 7/5) = 3 new.
    And the deployment "web" has 4 old and 3 new pods

  @simulated-workloads
  Scenario: The same rollout with maxSurge 0 leaves the HPA alone
    Given a deployment "web" with 4 pods
    And the deployment "web" rolls out with maxSurge 0 and maxUnavailable 1
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    And the pods of "web" report "http_requests" of 108, 108, 108 and 108
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    Given the new pods of "web" report "http_requests" of 0
    When the deployment "web" rolls out a new version and new pods become ready after 30s
    # No surge: web-3 makes room for web-4 (unready); still 4 pods.
    Then the deployment "web" has 3 old and 1 new pod
    When the pods report:
      | pod   | http_requests |
      | web-0 | 144           |
      | web-1 | 144           |
      | web-2 | 144           |
    # 432 over 4 pods: 108, ratio 1.08 as before the rollout.
    Then the deployment "web" stays at 4 replicas for 15s
    And the HPA "web" reports "http_requests" at 108
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  @simulated-workloads
  Scenario: cpu sets the unready surge pods aside and the HPA stays
    # 2160m over 4 pods: 54% of a 1-cpu request, ratio 1.08.
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 540m, 540m, 540m and 540m
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    Given the new pods of "web" report "cpu" of 50m
    When the deployment "web" rolls out a new version and new pods become ready after 30s
    Then the deployment "web" has 3 old and 2 new pods
    When the pods report:
      | pod   | cpu  |
      | web-0 | 720m |
      | web-1 | 720m |
      | web-2 | 720m |
    # The 3 ready pods: 72%, ratio 1.44. The 2 unready ones count as 0 on a
    # scale-up: 2160m over 5 pods is 43.2%, ratio 0.864, the other
    # direction: no change, and the HPA reports the ready pods' 72%.
    Then the deployment "web" stays at 4 replicas for 15s
    And the HPA "web" reports cpu utilization 72%
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  Scenario: A StatefulSet replaces one pod at a time, highest ordinal first
    Given a statefulset "db" with 3 pods
    And an HPA "db" for statefulset "db" with min 1 and max 10 replicas
    And the HPA "db" scales on cpu utilization 50%
    And the pods of "db" report "cpu" of 500m, 500m and 500m
    And the new pods of "db" report "cpu" of 500m
    When the statefulset "db" rolls out a new version and new pods become ready after 30s
    # db-2 is made anew and is unready; db-1 waits for it.
    Then the statefulset "db" has 2 old and 1 new pod
    # db-0 and db-1 at 50%: ratio 1.0, and unready pods count only on a
    # scale-up: nothing to do.
    When 15s pass
    Then the statefulset "db" is not rescaled
    And the HPA "db" reports cpu utilization 50%
    When 15s pass
    Then the statefulset "db" has 1 old and 2 new pods
    When 30s pass
    Then the statefulset "db" has 0 old and 3 new pods
    And the statefulset "db" is not rescaled
