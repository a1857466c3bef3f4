Feature: Pod-level requests leave out the pod overhead from Kubernetes 1.38
  With pod-level requests (PodLevelResources, on by default) and no
  container named, utilization is usage over the pod's request. Through
  1.37 that request is component-helpers' PodRequests, which adds
  spec.overhead (a RuntimeClass's, e.g. Kata's 250m); from 1.38 (k/k
  #142154) the overhead is left out. The sum of containers' requests never
  had it.

  # Each pod: pod-level request 1 cpu, overhead 1 cpu, using 900m.
  Background:
    Given a deployment "web" with pods:
      | pod   | cpu request | pod cpu request | pod cpu overhead |
      | web-0 | 500m        | 1               | 1                |
      | web-1 | 500m        | 1               | 1                |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m and 900m

  @k8s-1.37
  Scenario: Through 1.37 the overhead counts: 900m of 2 cpu is 45%, inside the tolerance
    When the HPA controller syncs
    Then the HPA "web" reports cpu utilization 45%
    And the deployment "web" is not rescaled

  @k8s-1.38
  Scenario: From 1.38 the overhead is left out: 900m of 1 cpu is 90%, almost twice the target
    # ratio 90/50 = 1.8: ceil(1.8 x 2) = 4
    When the HPA controller syncs
    Then the HPA "web" reports cpu utilization 90%
    And the deployment "web" has 4 replicas
