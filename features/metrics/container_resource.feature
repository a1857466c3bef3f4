Feature: ContainerResource metrics
  A ContainerResource metric looks at one named container of each pod, so a
  sidecar's usage and request do not dilute (or inflate) the application's
  utilization.

  @k8s-1.36
  Scenario: Utilization of the app container, ignoring the sidecar
    # app containers: (400m + 300m) / (500m + 500m) = 70%, ratio 1.4,
    # ceil(2.8) = 3. The whole pods would be at 40% and shrink instead.
    Given a deployment "web" with pods:
      | pod   | cpu request             |
      | web-0 | app=500m, sidecar=500m  |
      | web-1 | app=500m, sidecar=500m  |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on container "app" cpu utilization 50%
    And the pods report:
      | pod   | cpu                   |
      | web-0 | app=400m, sidecar=50m |
      | web-1 | app=300m, sidecar=50m |
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" reports cpu utilization 70%
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound" and message "the HPA was able to successfully calculate a replica count from cpu container resource utilization (percentage of request)"
    And an event "SuccessfulRescale" with message "New size: 3; reason: cpu container resource utilization (percentage of request) above target" is recorded for the HPA "web"

  Scenario: A busy sidecar does not scale an idle application
    # app containers at 100m of 500m = 20%: the HPA wants fewer pods, never
    # more, however busy the sidecars are; min 2 holds it.
    Given a deployment "web" with pods:
      | pod   | cpu request            |
      | web-0 | app=500m, sidecar=500m |
      | web-1 | app=500m, sidecar=500m |
    And an HPA "web" for deployment "web" with min 2 and max 10 replicas
    And the HPA "web" scales on container "app" cpu utilization 50%
    And the pods report:
      | pod   | cpu                    |
      | web-0 | app=100m, sidecar=500m |
      | web-1 | app=100m, sidecar=500m |
    When the HPA controller syncs
    Then the deployment "web" stays at 2 replicas for 10m
    And the HPA "web" reports cpu utilization 20%
    And the HPA "web" has condition "ScalingLimited" "True" with reason "TooFewReplicas" and message "the desired replica count is less than the minimum replica count"
