import { Page } from "../ui/Page";

export function DashboardPage() {
  return (
    <Page title="Dashboard">
      <p>Coming soon.</p>
    </Page>
  );
}
