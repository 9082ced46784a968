import { Page } from "../ui/Page";

export function WorkOrderPage({ id }: { id: string }) {
  return (
    <Page title="Work order">
      <p>{id}</p>
    </Page>
  );
}
